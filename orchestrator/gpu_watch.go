package orchestrator

import (
	"context"
	"fmt"
	"log/slog"
	"time"

	"workbench/models"
)

// GPUWatcher fires users' "notify me when a GPU frees" watches: when a GPU
// of a watched model is free, each pending watch on it gets one in-app
// notification (models.FireGPUWatch makes it exactly once).
type GPUWatcher struct {
	store  *models.Store
	pool   *Pool
	events *Broker
	log    *slog.Logger
	every  time.Duration
}

// NewGPUWatcher builds the watcher; it checks every `every` (default 15 s)
// and at once whenever a workbench stops, fails or is deleted.
func NewGPUWatcher(store *models.Store, pool *Pool, events *Broker, every time.Duration, log *slog.Logger) *GPUWatcher {
	if every <= 0 {
		every = 15 * time.Second
	}
	return &GPUWatcher{store: store, pool: pool, events: events, every: every, log: log.With("component", "gpu-watch")}
}

// Check fires the pending watches whose model has a free GPU now and
// returns how many it fired.
func (w *GPUWatcher) Check(ctx context.Context) (int, error) {
	pending, err := w.store.PendingGPUWatches(ctx)
	if err != nil || len(pending) == 0 {
		return 0, err
	}
	gpus, err := w.pool.List(ctx)
	if err != nil {
		return 0, err
	}
	free := map[string]int{}
	for _, g := range gpus {
		if g.State == GPUFree {
			free[g.Model]++
		}
	}
	fired := 0
	for _, wt := range pending {
		n := free[wt.GPUModel]
		if n == 0 {
			continue
		}
		msg := fmt.Sprintf("A %s GPU is free now (%d free). Launch a workbench before someone else takes it.", wt.GPUModel, n)
		ok, err := w.store.FireGPUWatch(ctx, wt.ID, msg, "/workbenches/new")
		if err != nil {
			return fired, err
		}
		if ok {
			fired++
		}
	}
	return fired, nil
}

// Run checks until ctx ends.
func (w *GPUWatcher) Run(ctx context.Context) {
	updates, unsubscribe := w.events.Subscribe("")
	defer unsubscribe()
	t := time.NewTicker(w.every)
	defer t.Stop()
	for {
		select {
		case <-ctx.Done():
			return
		case u := <-updates:
			if u.State != models.StateStopped && u.State != models.StateFailed && u.State != "deleted" {
				continue
			}
		case <-t.C:
		}
		if _, err := w.Check(ctx); err != nil && ctx.Err() == nil {
			w.log.Warn("GPU watch check", "err", err)
		}
	}
}
