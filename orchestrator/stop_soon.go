package orchestrator

import (
	"context"
	"sync"
	"time"

	"workbench/models"
)

// "Stops soon" warnings: a running workbench's owner is told, a lead
// before the earliest deadline the pages show (Deadlines: its maximum
// runtime, its owner's monthly limit, its idle timeout), when it will
// stop and why (EventStoppingSoon). Someone working in JupyterLab, or
// away from the portal, lost unsaved work to a stop they learned of only
// afterwards.
//
// Driven as the runtime stop is (runtime_timer.go): every cull pass looks
// at each running workbench and sends a warning that is due, or arms a
// timer for one due before the next pass. The timer decides again when
// it fires: a "+1 h", a budget change or new activity that moved the
// deadline since leaves it nothing to send, and the next pass arms the
// new one. A budget change and a "+1 h" look again at once. What was sent
// is recorded (models.ClaimStopWarning), so a restarted portal does not
// warn of the same deadline twice.

// StopSoonLead is how long before a stop its owner is warned: the 15
// minutes in which the workbench page already marks a deadline as soon.
const StopSoonLead = 15 * time.Minute

// stopSoonMinLead: a window so short that its lead (a quarter of it)
// would be under this gets no warning; it would come as the stop does.
const stopSoonMinLead = time.Minute

// stopSoonSame: deadlines closer than this are one deadline (a budget's
// instant, recomputed as usage is billed, moves by a second or so).
const stopSoonSame = time.Minute

// The kinds of deadline warned of (models.StopWarning.Kind).
const (
	stopKindRuntime = "runtime"
	stopKindBudget  = "budget"
	stopKindIdle    = "idle"
)

// stopSoonLead is the lead of a deadline window long: StopSoonLead, or a
// quarter of a shorter window (a 20-minute run is warned 5 minutes before
// its end, not at its start).
func stopSoonLead(window time.Duration) time.Duration {
	return min(StopSoonLead, window/4)
}

// stopSoon is the deadline a workbench is warned of and when.
type stopSoon struct {
	kind   string
	at     time.Time
	warnAt time.Time
}

// nextStop is the earliest of d's deadlines for wb and when to warn of
// it; ok is false when there is none or its window is too short.
func nextStop(wb *models.Workbench, d Deadlines) (s stopSoon, ok bool) {
	var from time.Time
	consider := func(kind string, at, since time.Time) {
		if at.IsZero() || (!s.at.IsZero() && !at.Before(s.at)) {
			return
		}
		s.kind, s.at, from = kind, at, since
	}
	var started time.Time
	if wb.StartedAt != nil {
		started = *wb.StartedAt
	}
	consider(stopKindRuntime, d.RuntimeStopAt, started)
	consider(stopKindBudget, d.BudgetStopAt, started)
	consider(stopKindIdle, d.IdleStopAt, d.LastActivity)
	if s.at.IsZero() || from.IsZero() {
		return stopSoon{}, false
	}
	lead := stopSoonLead(s.at.Sub(from))
	if lead < stopSoonMinLead {
		return stopSoon{}, false
	}
	s.warnAt = s.at.Add(-lead)
	return s, true
}

// stopSoonTimers holds one timer per workbench whose warning is near, and
// the deadline each workbench was last warned of in this process (which
// spares the database a write at every pass of the lead).
type stopSoonTimers struct {
	runtimeTimers
	sentMu sync.Mutex
	sent   map[string]stopSoon
}

// cancel drops id's timer, if any.
func (st *stopSoonTimers) cancel(id string) {
	st.mu.Lock()
	defer st.mu.Unlock()
	if t := st.timers[id]; t != nil {
		t.Stop()
		delete(st.timers, id)
	}
}

// warned reports whether s was warned of for id in this process.
func (st *stopSoonTimers) warned(id string, s stopSoon) bool {
	st.sentMu.Lock()
	defer st.sentMu.Unlock()
	w, ok := st.sent[id]
	return ok && w.kind == s.kind && sameDeadline(w.at, s.at)
}

func (st *stopSoonTimers) remember(id string, s stopSoon) {
	st.sentMu.Lock()
	defer st.sentMu.Unlock()
	if st.sent == nil {
		st.sent = map[string]stopSoon{}
	}
	st.sent[id] = s
}

func sameDeadline(a, b time.Time) bool {
	d := a.Sub(b)
	return d < stopSoonSame && d > -stopSoonSame
}

// armStopSoon warns wb's owner now when its warning is due, or arms a
// timer when it falls before the next cull pass.
func (m *Manager) armStopSoon(ctx context.Context, wb *models.Workbench, now time.Time) {
	s, ok := nextStop(wb, m.Deadlines(ctx, wb))
	switch {
	case !ok || !now.Before(s.at) || m.stopSoons.warned(wb.ID, s):
		m.stopSoons.cancel(wb.ID)
	case !s.warnAt.After(now):
		m.stopSoons.cancel(wb.ID)
		m.stopSoonDue(ctx, wb.ID, false)
	case s.warnAt.Before(now.Add(m.opt.CullEvery)):
		id := wb.ID
		m.stopSoons.set(id, s.warnAt.Sub(now), func() {
			defer m.stopSoons.done(id)
			m.stopSoonDue(context.Background(), id, true)
		})
	default:
		m.stopSoons.cancel(wb.ID)
	}
}

// rearmStopSoon looks again at once at the warning of workbench id, whose
// deadline moved (a "+1 h").
func (m *Manager) rearmStopSoon(ctx context.Context, id string) {
	wb, err := m.store.WorkbenchByID(ctx, id)
	if err != nil || wb.State != models.StateRunning {
		return
	}
	m.armStopSoon(ctx, wb, m.now())
}

// rearmStopSoonOf is rearmStopSoon for each running workbench of uid,
// whose budget's instant was computed again.
func (m *Manager) rearmStopSoonOf(ctx context.Context, uid int64) {
	running, err := m.store.ListWorkbenches(ctx, uid, models.StateRunning)
	if err != nil {
		return
	}
	now := m.now()
	for i := range running {
		m.armStopSoon(ctx, &running[i], now)
	}
}

// stopSoonDue warns the owner of workbench id if, now, it runs and its
// earliest deadline is within its lead and not warned of yet. fresh asks
// Jupyter for its activity first when that deadline is the idle one (a
// timer's look; the cull pass has just asked).
func (m *Manager) stopSoonDue(ctx context.Context, id string, fresh bool) {
	wb, err := m.store.WorkbenchByID(ctx, id)
	if err != nil || wb.State != models.StateRunning {
		return // stopped meanwhile: nothing to warn of
	}
	now := m.now()
	d := m.Deadlines(ctx, wb)
	s, ok := nextStop(wb, d)
	if ok && fresh && s.kind == stopKindIdle {
		if busy, last := m.jupyterActivity(ctx, wb); busy {
			m.activity.touch(wb.ID, now)
		} else {
			m.activity.touch(wb.ID, last)
		}
		d = m.Deadlines(ctx, wb)
		s, ok = nextStop(wb, d)
	}
	if !ok || now.Before(s.warnAt) || !now.Before(s.at) || m.stopSoons.warned(id, s) {
		return // moved, or already due: the next pass looks again
	}
	if s.kind == stopKindIdle && len(m.notices.senders) == 0 {
		return // idle is told by email or webhook only (tellStopSoon)
	}
	claimed, err := m.store.ClaimStopWarning(ctx, id, s.kind, s.at, stopSoonSame)
	if err != nil {
		m.log.Warn("stops soon: record", "id", id, "err", err)
		return
	}
	m.stopSoons.remember(id, s)
	if !claimed {
		return // warned before (by the process before a restart)
	}
	m.log.Info("stops soon", "id", id, "kind", s.kind, "at", s.at)
	m.tellStopSoon(ctx, wb, s, d)
}

// tellStopSoon words the warning and sends it. The time is the minute the
// stop falls in (never later than the stop), in UTC as every stored text
// has it; the notifications page words it for the reader. The link goes
// to the workbench's deadlines, where "+1 h" is, when a bump is allowed.
//
// An idle warning goes by email and webhook only, not to the in-app list:
// whoever is idle is not at the portal, and one back at it uses the
// workbench, which ends the idling the warning was about.
func (m *Manager) tellStopSoon(ctx context.Context, wb *models.Workbench, s stopSoon, d Deadlines) {
	when := s.at.UTC().Truncate(time.Minute).Format("2006-01-02 15:04")
	link := "/workbenches/" + wb.ID
	var msg string
	switch {
	case s.kind == stopKindRuntime && d.CanExtend:
		msg = reasonf("Workbench %s stops at %s UTC, when its maximum runtime of %s ends. Save your work, or add an hour on its page.",
			wb.Name, when, durationText(d.RuntimeLimit))
		link += "#deadlines"
	case s.kind == stopKindRuntime:
		msg = reasonf("Workbench %s stops at %s UTC, when its maximum runtime of %s ends. Save your work.", wb.Name, when, durationText(d.RuntimeLimit))
	case s.kind == stopKindBudget && d.BudgetStopForBookings:
		msg = reasonf("Workbench %s stops at %s UTC, when what is left of your monthly budget beside your bookings' unused time is spent. Save your work.", wb.Name, when)
	case s.kind == stopKindBudget:
		msg = reasonf("Workbench %s stops at %s UTC, when your monthly limit is reached. Save your work.", wb.Name, when)
	default:
		msg = reasonf("Workbench %s stops at %s UTC unless it is used: it has been idle for %s. Save your work, or use it to keep it running.",
			wb.Name, when, durationText(d.IdleFor.Truncate(time.Minute)))
	}
	m.tellUserVia(ctx, wb.OwnerID, wb, EventStoppingSoon, msg, link, s.kind != stopKindIdle)
}
