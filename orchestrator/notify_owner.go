package orchestrator

import (
	"context"
	"errors"
	"log/slog"
	"strings"
	"time"

	"workbench/models"
)

// Events told to a workbench's owner (Notice.Event). A person who clicked
// Launch and saw "queued", or left a preemptible run for the night, is not
// watching the page when these happen; the top bar's count, and email or
// the webhook where the operator set them up, tell them.
const (
	EventStarted      = "workbench_started"       // a queued launch started after waiting
	EventPreempt      = "workbench_preempt"       // a preemptible run must yield by a time
	EventPreempted    = "workbench_preempted"     // it was stopped for higher-priority work
	EventSpared       = "workbench_spared"        // told to yield, then let off: nobody needs its GPUs
	EventStopped      = "workbench_stopped"       // the portal stopped it (idle, runtime, budget)
	EventStoppingSoon = "workbench_stopping_soon" // the portal stops it soon (runtime, budget, idle: stop_soon.go)
	EventExpired      = "workbench_expired"       // a queued launch left the queue at its maximum wait
	EventFailed       = "workbench_failed"        // a queued launch was refused or failed when its turn came
	EventSaveCutShort = "image_save_cut_short"    // a save as image died with the portal process
	// EventSaveRecatalogued: a saved image made after the backup the
	// database was restored from is back in its owner's catalog.
	EventSaveRecatalogued = "image_save_recatalogued"
	EventHomeLost         = "home_lost" // the home volume was removed outside the portal
)

// startedAfterWait is the wait after which a queued launch's start is
// told to its owner: one placed within it is still watched by the person
// who clicked Launch (the form queues by default, so most launches pass
// through the queue for a moment).
const startedAfterWait = time.Minute

// ownerNotices delivers what happens to a user's own workbenches: an
// in-app notification always, the configured channels besides.
type ownerNotices struct {
	senders   []Sender
	publicURL string
}

// NotifyOwnersVia adds email/webhook delivery of the notices owners get
// about their workbenches (before Run). Best effort, as for GPU watches.
func (m *Manager) NotifyOwnersVia(publicURL string, senders ...Sender) {
	m.notices.publicURL = strings.TrimSuffix(publicURL, "/")
	m.notices.senders = append(m.notices.senders, senders...)
}

// tellOwner writes msg to wb's owner's notifications, linked to the
// workbench's page, and sends it through the configured channels. A
// failure is logged: the event itself has happened either way.
func (m *Manager) tellOwner(ctx context.Context, wb *models.Workbench, event, msg string) {
	m.tellUser(ctx, wb.OwnerID, wb, event, msg, "/workbenches/"+wb.ID)
}

// tellUser is tellOwner for what concerns a user and perhaps no one
// workbench (wb nil): their home volume.
func (m *Manager) tellUser(ctx context.Context, userID int64, wb *models.Workbench, event, msg, link string) {
	m.tellUserVia(ctx, userID, wb, event, msg, link, true)
}

// tellUserVia is tellUser with the in-app notification left out unless
// inApp (an idle warning goes only where an idle person reads it).
func (m *Manager) tellUserVia(ctx context.Context, userID int64, wb *models.Workbench, event, msg, link string, inApp bool) {
	m.notices.tell(ctx, m.store, m.log, userID, wb, event, msg, link, inApp)
}

// tell is tellUserVia with the store and log given: Accounts tells a
// renamed user without a manager (the command line).
func (n *ownerNotices) tell(ctx context.Context, store *models.Store, log *slog.Logger, userID int64, wb *models.Workbench, event, msg, link string, inApp bool) {
	if inApp {
		if err := store.AddNotification(ctx, userID, msg, link); err != nil {
			log.Warn("notify owner", "user_id", userID, "event", event, "err", err)
			return
		}
	}
	if len(n.senders) == 0 {
		return
	}
	u, err := store.UserByID(ctx, userID)
	if err != nil {
		log.Warn("notify owner: load user", "user_id", userID, "event", event, "err", err)
		return
	}
	notice := Notice{Event: event, User: u.Username, Email: u.Email,
		Message: msg, Link: n.publicURL + link, At: time.Now().UTC(), Locale: u.Locale, TimeZone: u.TimeZone}
	if wb != nil {
		notice.Workbench, notice.WorkbenchID = wb.Name, wb.ID
	}
	if !u.EmailWorkbenchNotices {
		notice.Email = "" // the user turned the email off (the webhook is the operator's)
	}
	deliver(ctx, log, n.senders, notice)
}

// tellOwnerWhy tells id's owner "Workbench NAME: REASON" with the reason its
// record now gives (what the page shows): for a launch that left the queue.
func (m *Manager) tellOwnerWhy(ctx context.Context, id, event string) {
	wb, err := m.store.WorkbenchByID(ctx, id)
	if err != nil {
		m.log.Warn("notify owner: load workbench", "id", id, "event", event, "err", err)
		return
	}
	m.tellOwner(ctx, wb, event, reasonf("Workbench %s: %s", wb.Name, wb.Reason))
}

// deliver sends n through each channel, each bounded in time; a user
// without an email address is no failure.
func deliver(ctx context.Context, log *slog.Logger, senders []Sender, n Notice) {
	for _, s := range senders {
		sctx, cancel := context.WithTimeout(ctx, 15*time.Second)
		err := s.Send(sctx, n)
		cancel()
		switch {
		case errors.Is(err, errNoAddress):
		case err != nil:
			log.Warn("notice: send", "channel", s.Name(), "event", n.Event, "user", n.User, "err", err)
		default:
			log.Info("notice: sent", "channel", s.Name(), "event", n.Event, "user", n.User)
		}
	}
}
