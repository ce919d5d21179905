package orchestrator

import (
	"context"
	"sync"

	"workbench/models"
	"workbench/orchestrator/runtime"
)

// A running workbench's container paused outside the portal (`docker
// pause`) still reads "running" to the engine, and Jupyter's socket still
// accepts connections: requests through the proxy hang with no answer.
// The reconciler records it (Workbench.PausedAt, on a pause or unpause
// event at once, else within a reconciliation), the proxy answers
// ErrPaused from that record without asking the engine, and the pages say
// so. It stays running and metered: its GPUs stay held by the container,
// which ran and can be unpaused at any moment (docs/ux-choices.md).

// The portal pauses a running container itself while it saves it as an
// image (docker commit pauses it while its files are read). That pause is
// not one outside the portal: reconciliation (the pause event starts one)
// neither records nor warns of it, and so, at its end, does not log an
// unpause either — every save logged "workbench container unpaused".

// ownPauses are the workbenches whose containers this process has paused
// (an entry per workbench saved while running, kept: a few bytes each).
type ownPauses struct {
	mu sync.Mutex
	m  map[string]*ownPause
}

// ownPause counts one workbench's pauses by the portal: active now, and
// gen moved by each start and end, so that a look at the container taken
// during a pause that has ended since is still known as the portal's.
type ownPause struct {
	active int
	gen    uint64
}

// pauseOwn marks id's container as paused by the portal until the
// returned func is called (after the commit, which unpauses it).
func (m *Manager) pauseOwn(id string) (done func()) {
	p := &m.ownPaused
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.m == nil {
		p.m = map[string]*ownPause{}
	}
	e := p.m[id]
	if e == nil {
		e = &ownPause{}
		p.m[id] = e
	}
	e.active++
	e.gen++
	return func() {
		p.mu.Lock()
		defer p.mu.Unlock()
		e.active--
		e.gen++
	}
}

// ownPauseMark is id's pause generation, taken before a look at its
// container.
func (m *Manager) ownPauseMark(id string) uint64 {
	p := &m.ownPaused
	p.mu.Lock()
	defer p.mu.Unlock()
	if e := p.m[id]; e != nil {
		return e.gen
	}
	return 0
}

// pausedByPortal reports whether a pause seen in a look at id's container
// taken after mark (ownPauseMark) may be the portal's own: one is under
// way, or one began or ended since the mark.
func (m *Manager) pausedByPortal(id string, mark uint64) bool {
	p := &m.ownPaused
	p.mu.Lock()
	defer p.mu.Unlock()
	e := p.m[id]
	return e != nil && (e.active > 0 || e.gen != mark)
}

// notePaused records, or forgets, that wb's running container c is paused,
// warning once when it is found paused. A pause of the portal's own (a
// save under way, or ended since mark was taken before c was looked at)
// is neither.
func (m *Manager) notePaused(ctx context.Context, wb *models.Workbench, owner *models.User, c runtime.ContainerInfo, mark uint64) {
	switch {
	case c.Paused && wb.PausedAt == nil && m.pausedByPortal(wb.ID, mark):
		// Saving as an image: over in a moment, by the portal's hand.
	case c.Paused && wb.PausedAt == nil:
		now := m.now().UTC()
		m.log.Warn("reconcile: workbench container paused outside the portal (docker pause); the proxy answers 503 until it is unpaused, and it is still charged",
			"id", wb.ID, "name", wb.Name, "owner", owner.Username, "container", c.Name)
		m.setFields(ctx, wb.ID, models.WorkbenchFields{PausedAt: &now})
	case !c.Paused && wb.PausedAt != nil:
		m.log.Info("reconcile: workbench container unpaused", "id", wb.ID, "paused_since", *wb.PausedAt)
		m.setFields(ctx, wb.ID, models.WorkbenchFields{ClearPaused: true})
	}
}
