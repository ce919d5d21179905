package orchestrator

import (
	"context"
	"io"
	"log/slog"
	"strings"
	"testing"
	"time"

	"workbench/models"
)

// stopSoonRig is a clocked unit rig whose "whole" flavor has a maximum
// runtime of maxRuntime (0: none), with one workbench running on it (idle
// timeout 24 h, so that the idle stop comes last) and the owner's notices
// also sent to sent.
func stopSoonRig(t *testing.T, maxRuntime time.Duration) (*unitRig, func(time.Duration), *models.Workbench, *sentNotices) {
	t.Helper()
	r, advance := clockedUnitRig(t)
	ctx := context.Background()
	fl, err := r.store.FlavorByNameOrID(ctx, "whole")
	if err != nil {
		t.Fatal(err)
	}
	fl.MaxRuntimeS = int64(maxRuntime / time.Second)
	if err := r.store.UpdateFlavor(ctx, fl); err != nil {
		t.Fatal(err)
	}
	sent := &sentNotices{}
	r.m.NotifyOwnersVia("https://portal.example.org", sent)
	wb, err := r.m.Launch(ctx, r.owner, LaunchRequest{Name: "alice-train", Image: "mem", Flavor: "whole", IdleTimeout: 24 * time.Hour})
	if err != nil {
		t.Fatal(err)
	}
	wb = r.mem().waitState(t, wb.ID, models.StateRunning)
	return r, advance, wb, sent
}

// stopSoonNotices are the in-app notifications of the owner that warn of a
// stop ("… stops at …"), and the channels' stopping-soon notices.
func stopSoonNotices(t *testing.T, r *unitRig, sent *sentNotices) ([]models.Notification, []Notice) {
	t.Helper()
	all, err := r.store.ListNotifications(context.Background(), r.owner.ID, 50)
	if err != nil {
		t.Fatal(err)
	}
	var inApp []models.Notification
	for _, n := range all {
		if strings.Contains(n.Message, " stops at ") {
			inApp = append(inApp, n)
		}
	}
	var out []Notice
	for _, n := range sent.all() {
		if n.Event == "workbench_stopping_soon" {
			out = append(out, n)
		}
	}
	return inApp, out
}

// stopClock is the minute of a stop as a warning writes it.
func stopClock(at time.Time) string {
	return at.UTC().Truncate(time.Minute).Format("2006-01-02 15:04") + " UTC"
}

// The owner of a run with a maximum runtime is warned 15 minutes before
// it, once: in the portal and through the channels, with its stop time,
// why, and a link to the page's deadlines where "+1 h" is. The warning
// falls between two cull passes: the pass before arms a timer for it.
func TestMemStopSoonWarnsBeforeTheMaximumRuntime(t *testing.T) {
	t.Parallel()
	r, advance, wb, sent := stopSoonRig(t, 2*time.Hour)
	ctx := context.Background()
	stop := wb.StartedAt.Add(2 * time.Hour)
	advance(stop.Add(-15*time.Minute - 2*time.Second).Sub(r.m.now()))
	r.m.Cull(ctx)
	if inApp, out := stopSoonNotices(t, r, sent); len(inApp)+len(out) != 0 {
		t.Fatalf("warned 15 min 2 s before the stop: %+v %+v", inApp, out)
	}
	advance(2 * time.Second)
	waitFor(t, func() bool { _, out := stopSoonNotices(t, r, sent); return len(out) == 1 })
	inApp, out := stopSoonNotices(t, r, sent)
	want := "Workbench alice-train stops at " + stopClock(stop) + ", when its maximum runtime of 2 h ends. Save your work, or add an hour on its page."
	if len(inApp) != 1 || inApp[0].Message != want || inApp[0].Link != "/workbenches/"+wb.ID+"#deadlines" {
		t.Fatalf("in-app warning %+v, want %q linking to the page's deadlines", inApp, want)
	}
	if n := out[0]; n.Message != want || n.Workbench != "alice-train" || n.WorkbenchID != wb.ID || n.User != "alice" ||
		n.Link != "https://portal.example.org/workbenches/"+wb.ID+"#deadlines" || n.subject() != "Workbench: alice-train stops soon" {
		t.Fatalf("sent %+v", n)
	}
	// Later passes in the lead send nothing more.
	advance(5 * time.Minute)
	r.m.Cull(ctx)
	if inApp, out := stopSoonNotices(t, r, sent); len(inApp) != 1 || len(out) != 1 {
		t.Fatalf("warned again at a later pass: %d in-app, %d sent", len(inApp), len(out))
	}
}

// A "+1 h" moves the warning with the stop: the timer armed for the old
// one sends nothing when it fires, and the new stop is warned of 15
// minutes before it.
func TestMemStopSoonMovesWithAnExtension(t *testing.T) {
	t.Parallel()
	r, advance, wb, sent := stopSoonRig(t, 2*time.Hour)
	ctx := context.Background()
	stop := wb.StartedAt.Add(2 * time.Hour)
	advance(stop.Add(-15*time.Minute - 2*time.Second).Sub(r.m.now()))
	r.m.Cull(ctx) // arms the old warning's timer
	if _, err := r.m.ExtendRuntime(ctx, wb.ID); err != nil {
		t.Fatal(err)
	}
	advance(3 * time.Second)
	r.m.stopSoonDue(ctx, wb.ID, true) // what the old timer would do, had it been left
	r.m.Cull(ctx)
	if inApp, out := stopSoonNotices(t, r, sent); len(inApp)+len(out) != 0 {
		t.Fatalf("warned of the stop the extension moved: %+v %+v", inApp, out)
	}
	newStop := stop.Add(time.Hour)
	advance(newStop.Add(-15 * time.Minute).Sub(r.m.now()))
	r.m.Cull(ctx)
	inApp, out := stopSoonNotices(t, r, sent)
	if len(inApp) != 1 || len(out) != 1 || !strings.Contains(inApp[0].Message, "stops at "+stopClock(newStop)+", when its maximum runtime of 3 h ends") {
		t.Fatalf("after the extension: %+v, %d sent; want one warning of the stop at %s", inApp, len(out), stopClock(newStop))
	}
}

// A workbench stopped before its warning is due is not warned of; its
// next run is, of its own stop.
func TestMemStopSoonNotSentAfterTheStop(t *testing.T) {
	t.Parallel()
	r, advance, wb, sent := stopSoonRig(t, 2*time.Hour)
	ctx := context.Background()
	stop := wb.StartedAt.Add(2 * time.Hour)
	advance(stop.Add(-15*time.Minute - 2*time.Second).Sub(r.m.now()))
	r.m.Cull(ctx) // arms the timer
	if err := r.m.Stop(ctx, wb.ID, ""); err != nil {
		t.Fatal(err)
	}
	r.mem().waitState(t, wb.ID, models.StateStopped)
	advance(5 * time.Second)
	r.m.stopSoonDue(ctx, wb.ID, true) // the timer firing
	r.m.Cull(ctx)
	if inApp, out := stopSoonNotices(t, r, sent); len(inApp)+len(out) != 0 {
		t.Fatalf("a stopped workbench was warned: %+v %+v", inApp, out)
	}
	// Started again, its new run is warned of at its own lead.
	if err := r.m.Start(ctx, wb.ID, r.owner); err != nil {
		t.Fatal(err)
	}
	again := r.mem().waitState(t, wb.ID, models.StateRunning)
	newStop := again.StartedAt.Add(2 * time.Hour)
	advance(newStop.Add(-14 * time.Minute).Sub(r.m.now()))
	r.m.Cull(ctx)
	if inApp, out := stopSoonNotices(t, r, sent); len(inApp) != 1 || len(out) != 1 || !strings.Contains(out[0].Message, stopClock(newStop)) {
		t.Fatalf("the new run: %+v %+v; want one warning of its stop at %s", inApp, out, stopClock(newStop))
	}
}

// A warning sent before the portal restarts is not sent again by the new
// process for the same stop; a stop moved since is warned of.
func TestMemStopSoonNotSentTwiceAcrossARestart(t *testing.T) {
	t.Parallel()
	r, advance, wb, sent := stopSoonRig(t, 2*time.Hour)
	ctx := context.Background()
	stop := wb.StartedAt.Add(2 * time.Hour)
	advance(stop.Add(-10 * time.Minute).Sub(r.m.now()))
	r.m.Cull(ctx)
	if inApp, out := stopSoonNotices(t, r, sent); len(inApp) != 1 || len(out) != 1 {
		t.Fatalf("before the restart: %d in-app, %d sent; want one warning", len(inApp), len(out))
	}

	r.m.Wait()
	m2 := NewManager(r.store, r.m.pool, r.rt, "unittest", r.m.opt, slog.New(slog.NewTextHandler(io.Discard, nil)))
	t.Cleanup(m2.Wait)
	m2.SetClock(r.m.now)
	sent2 := &sentNotices{}
	m2.NotifyOwnersVia("https://portal.example.org", sent2)
	advance(time.Minute)
	m2.Cull(ctx)
	if inApp, out := stopSoonNotices(t, r, sent2); len(inApp) != 1 || len(out) != 0 {
		t.Fatalf("after the restart: %d in-app, %d sent; the stop was warned of already", len(inApp), len(out))
	}
	// The new process warns of a stop that moved.
	if _, err := m2.ExtendRuntime(ctx, wb.ID); err != nil {
		t.Fatal(err)
	}
	advance(time.Hour)
	m2.Cull(ctx)
	if inApp, out := stopSoonNotices(t, r, sent2); len(inApp) != 2 || len(out) != 1 || !strings.Contains(out[0].Message, stopClock(stop.Add(time.Hour))) {
		t.Fatalf("the moved stop after the restart: %d in-app, %+v", len(inApp), out)
	}
}

// The owner is warned before their monthly budget stops the workbench,
// saying so; there is no "+1 h" for a budget, so none is offered.
func TestMemStopSoonWarnsBeforeTheBudgetStop(t *testing.T) {
	t.Parallel()
	r, advance := clockedUnitRig(t)
	ctx := context.Background()
	r.m.billing.now = r.m.now // the budget's timer reads billing's clock
	sent := &sentNotices{}
	r.m.NotifyOwnersVia("https://portal.example.org", sent)
	// Early in a month, so that the budget's two hours fit in it.
	now := r.m.now()
	advance(models.MonthStart(now).AddDate(0, 1, 2).Sub(now))
	wb, err := r.m.Launch(ctx, r.owner, LaunchRequest{Name: "alice-train", Image: "mem", Flavor: "whole", IdleTimeout: 24 * time.Hour})
	if err != nil {
		t.Fatal(err)
	}
	r.mem().waitState(t, wb.ID, models.StateRunning)
	// Used now: the idle stop, a day away, comes after the budget's.
	r.m.Touch(wb.ID, r.m.now())
	open, err := r.store.OpenIntervals(ctx, r.owner.ID)
	if err != nil || len(open) != 1 {
		t.Fatalf("open intervals %v %v", open, err)
	}
	scheds, err := r.store.Schedules(ctx)
	if err != nil {
		t.Fatal(err)
	}
	perHour, err := r.m.billing.hourlyRate(shapeOf(open[0]), scheds)
	if err != nil || perHour <= 0 {
		t.Fatalf("rate %d: %v", perHour, err)
	}
	budget := 2 * perHour
	if err := r.store.SetQuota(ctx, models.ScopeUser, r.owner.ID, models.Limits{BudgetPerMonthMicros: &budget}, "test"); err != nil {
		t.Fatal(err)
	}
	r.m.budgetWork.Wait()
	r.m.scheduleBudget(ctx, r.owner.ID)
	got, _ := r.store.WorkbenchByID(ctx, wb.ID)
	stop := r.m.Deadlines(ctx, got).BudgetStopAt
	if stop.IsZero() {
		t.Fatal("no budget stop")
	}
	advance(stop.Add(-15*time.Minute - time.Minute).Sub(r.m.now()))
	r.m.scheduleBudget(ctx, r.owner.ID) // a billing pass, a minute before the warning
	if inApp, out := stopSoonNotices(t, r, sent); len(inApp)+len(out) != 0 {
		t.Fatalf("warned 16 min before the budget stop: %+v %+v", inApp, out)
	}
	advance(time.Minute + time.Second)
	r.m.Cull(ctx)
	inApp, out := stopSoonNotices(t, r, sent)
	stop = r.m.Deadlines(ctx, got).BudgetStopAt
	want := "Workbench alice-train stops at " + stopClock(stop) + ", when your monthly limit is reached. Save your work."
	if len(inApp) != 1 || inApp[0].Message != want || inApp[0].Link != "/workbenches/"+wb.ID || len(out) != 1 {
		t.Fatalf("budget warning %+v (%d sent), want %q linking to the page", inApp, len(out), want)
	}
}

// An idle workbench's warning goes by the channels (email, webhook), not
// to the in-app list, and says that using it keeps it running.
func TestMemStopSoonIdleGoesOutsideThePortalOnly(t *testing.T) {
	t.Parallel()
	r, advance := clockedUnitRig(t)
	ctx := context.Background()
	sent := &sentNotices{}
	r.m.NotifyOwnersVia("https://portal.example.org", sent)
	wb, err := r.m.Launch(ctx, r.owner, LaunchRequest{Name: "alice-idle", Image: "mem", Flavor: "whole", IdleTimeout: time.Hour})
	if err != nil {
		t.Fatal(err)
	}
	wb = r.mem().waitState(t, wb.ID, models.StateRunning)
	stop := wb.StartedAt.Add(time.Hour)
	advance(stop.Add(-10 * time.Minute).Sub(r.m.now()))
	r.m.Cull(ctx)
	inApp, out := stopSoonNotices(t, r, sent)
	if len(inApp) != 0 || len(out) != 1 ||
		out[0].Message != "Workbench alice-idle stops at "+stopClock(stop)+" unless it is used: it has been idle for 50 min. Save your work, or use it to keep it running." {
		t.Fatalf("idle warning: in-app %+v, sent %+v", inApp, out)
	}
}
