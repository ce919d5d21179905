package gpu

import (
	"context"
	"log/slog"
	"sync"
	"time"
)

// Defaults used when NewSampler gets a non-positive interval or capacity.
const (
	DefaultSampleInterval = 15 * time.Second
	DefaultSampleCapacity = 240 // one hour at the default interval
)

// Sampler polls an Inventory's Sample at a fixed interval and keeps a
// bounded history per GPU UUID, for the utilisation dashboard, idle
// culling on 0% GPU use, and metrics. Safe for concurrent use.
type Sampler struct {
	inv      Inventory
	interval time.Duration
	capacity int
	logger   *slog.Logger

	mu      sync.RWMutex
	history map[string]*ring
	failing bool // last collection failed; log the failure once, not per tick
}

// NewSampler prepares a sampler; call Run to start it.
func NewSampler(inv Inventory, interval time.Duration, capacity int, logger *slog.Logger) *Sampler {
	if interval <= 0 {
		interval = DefaultSampleInterval
	}
	if capacity <= 0 {
		capacity = DefaultSampleCapacity
	}
	if logger == nil {
		logger = slog.Default()
	}
	return &Sampler{
		inv:      inv,
		interval: interval,
		capacity: capacity,
		logger:   logger.With("component", "gpu-sampler"),
		history:  map[string]*ring{},
	}
}

// Run samples immediately, then every interval, until ctx is done.
func (s *Sampler) Run(ctx context.Context) {
	t := time.NewTicker(s.interval)
	defer t.Stop()
	for {
		if err := s.Collect(ctx); err != nil && ctx.Err() != nil {
			return
		}
		select {
		case <-ctx.Done():
			return
		case <-t.C:
		}
	}
}

// Collect takes one reading of every GPU and appends it to the history.
// Run calls it; it is exported for callers that want a reading on demand.
func (s *Sampler) Collect(ctx context.Context) error {
	samples, err := s.inv.Sample(ctx)
	s.mu.Lock()
	defer s.mu.Unlock()
	if err != nil {
		if !s.failing && ctx.Err() == nil {
			s.logger.Warn("GPU sampling failed", "err", err)
		}
		s.failing = true
		return err
	}
	if s.failing {
		s.logger.Info("GPU sampling recovered")
		s.failing = false
	}
	for _, smp := range samples {
		r := s.history[smp.UUID]
		if r == nil {
			r = newRing(s.capacity)
			s.history[smp.UUID] = r
		}
		r.push(smp)
	}
	return nil
}

// History returns a copy of the samples kept for uuid, oldest first.
func (s *Sampler) History(uuid string) []Sample {
	s.mu.RLock()
	defer s.mu.RUnlock()
	r := s.history[uuid]
	if r == nil {
		return nil
	}
	return r.slice()
}

// Latest returns the newest sample for uuid.
func (s *Sampler) Latest(uuid string) (Sample, bool) {
	s.mu.RLock()
	defer s.mu.RUnlock()
	r := s.history[uuid]
	if r == nil {
		return Sample{}, false
	}
	return r.latest()
}
