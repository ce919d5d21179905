package orchestrator

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"strings"
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
	// senders deliver a fired watch by email and webhook too, when the
	// operator configured them; publicURL makes the link absolute.
	senders   []Sender
	publicURL string
}

// SendVia adds email/webhook delivery of fired watches (SendVia before
// Run). Each fired watch is sent once per channel, best effort: a failure
// is logged, the in-app notification stays.
func (w *GPUWatcher) SendVia(publicURL string, senders ...Sender) {
	w.publicURL = strings.TrimSuffix(publicURL, "/")
	w.senders = append(w.senders, senders...)
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
	// A GPU the queue is about to hand to a waiting launch is not free for
	// a watcher: telling them to launch would only put them in the queue.
	if err := w.subtractQueued(ctx, free); err != nil {
		return 0, err
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
			w.send(ctx, wt, msg, "/workbenches/new")
		}
	}
	return fired, nil
}

// send delivers a watch that just fired through the configured channels.
// It runs once per firing (FireGPUWatch reports a firing once), so each
// subscription is sent at most once per channel.
func (w *GPUWatcher) send(ctx context.Context, wt models.GPUWatch, msg, link string) {
	if len(w.senders) == 0 {
		return
	}
	u, err := w.store.UserByID(ctx, wt.UserID)
	if err != nil {
		w.log.Warn("GPU watch: load user", "watch", wt.ID, "err", err)
		return
	}
	n := Notice{Event: "gpu_free", WatchID: wt.ID, User: u.Username, Email: u.Email, GPUModel: wt.GPUModel,
		Message: msg, Link: w.publicURL + link, At: time.Now().UTC()}
	for _, s := range w.senders {
		sctx, cancel := context.WithTimeout(ctx, 15*time.Second)
		err := s.Send(sctx, n)
		cancel()
		switch {
		case errors.Is(err, errNoAddress):
		case err != nil:
			w.log.Warn("GPU watch: send", "channel", s.Name(), "watch", wt.ID, "user", u.Username, "err", err)
		default:
			w.log.Info("GPU watch: sent", "channel", s.Name(), "watch", wt.ID, "user", u.Username)
		}
	}
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

// subtractQueued takes the GPUs that queued workbenches wait for off free.
func (w *GPUWatcher) subtractQueued(ctx context.Context, free map[string]int) error {
	queued, err := w.store.ListWorkbenches(ctx, 0, models.StateQueued)
	if err != nil {
		return err
	}
	for _, wb := range queued {
		fl, err := w.store.FlavorByID(ctx, wb.FlavorID)
		if errors.Is(err, models.ErrNotFound) {
			continue
		} else if err != nil {
			return err
		}
		if fl.GPUCount > 0 && wholeGPU(fl) {
			free[fl.GPUModel] -= fl.GPUCount
		}
	}
	return nil
}
