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
	// DefaultIdleThresholdPercent: a GPU below this SM utilisation counts
	// as idle for GPU-idle release.
	DefaultIdleThresholdPercent = 5
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
	// idleSince is, per GPU, the time of the first sample of the current
	// unbroken run of readable samples below idleThreshold. It is kept
	// apart from the bounded history so idle runs longer than the
	// history still count; any unreadable or busy sample ends the run.
	idleSince     map[string]time.Time
	idleThreshold uint32
	failing       bool // last collection failed; log the failure once, not per tick
	// maxAge is how old the latest sample may be and still count as the
	// GPU's current reading (default two intervals): after failed
	// collections the last good reading would otherwise show as live.
	maxAge time.Duration
	now    func() time.Time // stamps samples; see SetClock
	// afterCollect run after each collection (success or not), outside
	// the lock: the manager follows per-unit idle runs there (MIG
	// instances, slice holders), which need its attribution.
	afterCollect []func(ctx context.Context, err error)
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

		idleSince:     map[string]time.Time{},
		idleThreshold: DefaultIdleThresholdPercent,
		now:           time.Now,
		maxAge:        2 * interval,
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
	err := s.collect(ctx)
	s.mu.RLock()
	after := s.afterCollect
	s.mu.RUnlock()
	for _, f := range after {
		f(ctx, err)
	}
	return err
}

// AfterCollect registers f to run after every collection, so readers of
// Latest see each sample once (per-unit idle runs, orchestrator). err is
// the collection's: after a failure Latest still holds the previous
// reading (until it is older than MaxAge), which must not count as a new
// one.
func (s *Sampler) AfterCollect(f func(ctx context.Context, err error)) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.afterCollect = append(s.afterCollect, f)
}

func (s *Sampler) collect(ctx context.Context) error {
	samples, err := s.inv.Sample(ctx)
	s.mu.Lock()
	defer s.mu.Unlock()
	if err != nil {
		if !s.failing && ctx.Err() == nil {
			s.logger.Warn("GPU sampling failed", "err", err)
		}
		s.failing = true
		clear(s.idleSince) // could not read: never idle
		return err
	}
	if s.failing {
		s.logger.Info("GPU sampling recovered")
		s.failing = false
	}
	seen := make(map[string]bool, len(samples))
	at := s.now()
	for _, smp := range samples {
		smp.At = at // one time per cycle, on the sampler's clock
		seen[smp.UUID] = true
		s.noteIdle(smp)
		r := s.history[smp.UUID]
		if r == nil {
			r = newRing(s.capacity)
			s.history[smp.UUID] = r
		}
		r.push(smp)
	}
	for uuid := range s.idleSince {
		if !seen[uuid] { // GPU vanished from the reading: unknown, not idle
			delete(s.idleSince, uuid)
		}
	}
	return nil
}

// noteIdle extends or ends the GPU's idle run. Caller holds s.mu.
func (s *Sampler) noteIdle(smp Sample) {
	if !smp.Readable(FieldUtil) || smp.UtilPercent >= s.idleThreshold {
		delete(s.idleSince, smp.UUID)
		return
	}
	if _, ok := s.idleSince[smp.UUID]; !ok {
		s.idleSince[smp.UUID] = smp.At
	}
}

// SetClock replaces the clock that stamps samples (tests; the manager's
// culler compares idle runs against its own injectable clock). Call
// before Run.
func (s *Sampler) SetClock(now func() time.Time) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.now = now
}

// SetIdleThreshold sets the SM utilisation (percent) below which a GPU
// counts as idle. Call before Run.
func (s *Sampler) SetIdleThreshold(percent uint32) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.idleThreshold = percent
}

// IdleSince returns when the GPU's current idle run began: every sample
// since then was readable and below the threshold. ok is false when the
// latest sample was busy or unreadable, or there is none.
func (s *Sampler) IdleSince(uuid string) (since time.Time, ok bool) {
	s.mu.RLock()
	defer s.mu.RUnlock()
	since, ok = s.idleSince[uuid]
	return since, ok
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

// Latest returns the newest sample for uuid. A sample older than MaxAge
// (collections have failed since, or the GPU vanished from them) is no
// current reading: Latest then returns it as Stale makes it, every field
// unread, so it reads as "could not read" — never idle, never a stale
// number.
func (s *Sampler) Latest(uuid string) (Sample, bool) {
	s.mu.RLock()
	defer s.mu.RUnlock()
	r := s.history[uuid]
	if r == nil {
		return Sample{}, false
	}
	l, ok := r.latest()
	if ok && !s.freshLocked(l.At) {
		l = l.Stale()
	}
	return l, ok
}

// Fresh reports whether a sample taken at "at" is recent enough (no older
// than MaxAge on the sampler's clock) to be shown as the current reading.
func (s *Sampler) Fresh(at time.Time) bool {
	s.mu.RLock()
	defer s.mu.RUnlock()
	return s.freshLocked(at)
}

func (s *Sampler) freshLocked(at time.Time) bool {
	return s.maxAge <= 0 || !s.now().After(at.Add(s.maxAge))
}

// SetMaxAge sets how old the latest sample may be and still be the
// current reading (default two sampling intervals; 0 or less: no limit).
// Call before Run.
func (s *Sampler) SetMaxAge(d time.Duration) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.maxAge = d
}

// MaxAge is how old the latest sample may be and still be current.
func (s *Sampler) MaxAge() time.Duration {
	s.mu.RLock()
	defer s.mu.RUnlock()
	return s.maxAge
}

// IdleThreshold is the SM utilisation (percent) below which a GPU is idle.
func (s *Sampler) IdleThreshold() uint32 {
	s.mu.RLock()
	defer s.mu.RUnlock()
	return s.idleThreshold
}

// Capacity is how many samples the history keeps per GPU.
func (s *Sampler) Capacity() int { return s.capacity }

// AnyMIG reports whether some GPU's latest sample has MIG instance
// readings (the manager then attributes per-instance figures even while
// no instance is held, for the per-unit rollup).
func (s *Sampler) AnyMIG() bool {
	s.mu.RLock()
	defer s.mu.RUnlock()
	for _, r := range s.history {
		if l, ok := r.latest(); ok && len(l.MIG) > 0 {
			return true
		}
	}
	return false
}

// Previous returns the sample of uuid before the latest (the other end of
// the latest gap, for energy deltas).
func (s *Sampler) Previous(uuid string) (Sample, bool) {
	s.mu.RLock()
	defer s.mu.RUnlock()
	r := s.history[uuid]
	if r == nil {
		return Sample{}, false
	}
	return r.previous()
}
