package orchestrator

import (
	"context"
	"errors"
	"fmt"
	"net"
	"net/http"
	"net/http/httptest"
	"slices"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"workbench/models"
	"workbench/models/pricing"
	"workbench/orchestrator/runtime"
)

// queueRig is a memRig whose containers' Jupyter answers, with a clock the
// test moves (manager and store), and the rig's one-GPU flavor.
type queueRig struct {
	*memRig
	flavor string
	alice  *models.User
	mu     sync.Mutex
	now    time.Time
}

func newQueueRig(t *testing.T) *queueRig {
	t.Helper()
	// Jupyter's stand-in closes after the manager's work has ended (cleanups
	// run last first): a failing test must not leave a launch waiting for
	// it until the ready timeout.
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) { w.WriteHeader(http.StatusOK) }))
	t.Cleanup(srv.Close)
	r := &queueRig{memRig: newMemRig(t), now: time.Now().UTC()}
	host, portText, _ := net.SplitHostPort(strings.TrimPrefix(srv.URL, "http://"))
	port, _ := strconv.Atoi(portText)
	r.rt.SetEndpoint(func(info runtime.ContainerInfo, _ string) (string, int) {
		if !info.Running {
			return "", 0
		}
		return host, port
	})
	clock := func() time.Time {
		r.mu.Lock()
		defer r.mu.Unlock()
		return r.now
	}
	r.m.SetClock(clock)
	r.store.SetClock(clock)
	r.rt.SetClock(clock)
	ctx := context.Background()
	fl, err := r.store.FlavorByID(ctx, r.wb.FlavorID)
	if err != nil {
		t.Fatal(err)
	}
	r.flavor = fl.Name
	if r.alice, err = r.store.UserByID(ctx, r.wb.OwnerID); err != nil {
		t.Fatal(err)
	}
	return r
}

func (r *queueRig) advance(d time.Duration) {
	r.mu.Lock()
	r.now = r.now.Add(d)
	r.mu.Unlock()
}

func (r *queueRig) user(t *testing.T, name string) *models.User {
	t.Helper()
	u, err := r.store.CreateUser(context.Background(), models.NewUser{Username: name, Password: name + "-password", Role: "user"})
	if err != nil {
		t.Fatal(err)
	}
	return u
}

func (r *queueRig) launch(t *testing.T, u *models.User, name string, req LaunchRequest) *models.Workbench {
	t.Helper()
	req.Name, req.Image, req.Flavor = name, "mem", r.flavor
	wb, err := r.m.Launch(context.Background(), u, req)
	if err != nil {
		t.Fatalf("launch %s: %v", name, err)
	}
	return wb
}

// fillWithSpots fills the seven GPUs the rig's own workbench leaves with
// u's preemptible runs, a minute apart (the last is the newest); the last
// one resumes after a preemption when autoResume is set.
func (r *queueRig) fillWithSpots(t *testing.T, u *models.User, autoResume bool) []*models.Workbench {
	t.Helper()
	var runs []*models.Workbench
	for i := 0; i < 7; i++ {
		wb := r.launch(t, u, fmt.Sprintf("spot-%d", i), LaunchRequest{Preemptible: true, AutoResume: autoResume && i == 6})
		runs = append(runs, r.waitState(t, wb.ID, models.StateRunning))
		r.advance(time.Minute)
	}
	return runs
}

// fill launches running workbenches until every GPU is bound (the rig's own
// holds one).
func (r *queueRig) fill(t *testing.T, u *models.User, req LaunchRequest) []*models.Workbench {
	t.Helper()
	var out []*models.Workbench
	for i := 0; i < 7; i++ {
		wb := r.launch(t, u, fmt.Sprintf("fill-%s-%d", u.Username, i), req)
		out = append(out, r.waitState(t, wb.ID, models.StateRunning))
	}
	return out
}

// In memory: a launch with queue on a full pool waits with its position and
// the reason, costs nothing while it waits, and starts when a GPU frees.
func TestMemQueueWaitsThenStartsWhenAGPUFrees(t *testing.T) {
	t.Parallel()
	r := newQueueRig(t)
	ctx := context.Background()
	r.fill(t, r.alice, LaunchRequest{})
	bob := r.user(t, "bob")
	first := r.launch(t, bob, "first", LaunchRequest{Queue: true})
	r.advance(time.Second)
	second := r.launch(t, bob, "second", LaunchRequest{Queue: true})
	if first.State != models.StateQueued || len(first.GPUs) != 0 {
		t.Fatalf("first: %s with GPUs %v, want queued with none", first.State, first.GPUs)
	}
	if err := r.m.Drain(ctx); err != nil {
		t.Fatal(err)
	}
	w1, _ := r.store.WorkbenchByID(ctx, first.ID)
	w2, _ := r.store.WorkbenchByID(ctx, second.ID)
	if w1.QueuePosition != 1 || !strings.Contains(w1.QueueReason, "1 × H100 80GB HBM3 needed; 0 free; you are next") {
		t.Fatalf("first: position %d, reason %q", w1.QueuePosition, w1.QueueReason)
	}
	if w2.QueuePosition != 2 || !strings.HasSuffix(w2.QueueReason, "1 workbench ahead of you") {
		t.Fatalf("second: position %d, reason %q", w2.QueuePosition, w2.QueueReason)
	}
	r.advance(time.Hour) // an hour in the queue is free
	if err := r.m.Stop(ctx, r.wb.ID, ""); err != nil {
		t.Fatal(err)
	}
	w1 = r.waitState(t, first.ID, models.StateRunning)
	if len(w1.GPUs) != 1 {
		t.Fatalf("placed with GPUs %v", w1.GPUs)
	}
	iv, err := r.store.OpenIntervalOf(ctx, first.ID)
	if err != nil {
		t.Fatal(err)
	}
	if iv.StartedAt.Before(w1.CreatedAt.Add(time.Hour)) {
		t.Fatalf("metering starts %s, before the wait ended (queued at %s)", iv.StartedAt, w1.CreatedAt)
	}
	waitFor(t, func() bool {
		w2, _ = r.store.WorkbenchByID(ctx, second.ID)
		return w2.QueuePosition == 1
	})
	if w2.State != models.StateQueued {
		t.Fatalf("second is %s", w2.State)
	}
	// Cancel: stopping a queued workbench takes it out of the queue.
	if err := r.m.Stop(ctx, second.ID, ""); err != nil {
		t.Fatal(err)
	}
	w2, _ = r.store.WorkbenchByID(ctx, second.ID)
	if w2.State != models.StateStopped || !strings.Contains(w2.Reason, "left the queue") {
		t.Fatalf("cancelled: %s %q", w2.State, w2.Reason)
	}
	if _, err := r.store.OpenIntervalOf(ctx, second.ID); !errors.Is(err, models.ErrNotFound) {
		t.Fatalf("a cancelled queued workbench was metered (%v)", err)
	}
}

// In memory: a queued launch leaves the queue after the maximum wait, with
// the reason.
func TestMemQueueExpires(t *testing.T) {
	t.Parallel()
	r := newQueueRig(t)
	ctx := context.Background()
	r.fill(t, r.alice, LaunchRequest{})
	wb := r.launch(t, r.alice, "late", LaunchRequest{Queue: true})
	r.advance(r.m.opt.QueueMaxWait - time.Second)
	if err := r.m.Drain(ctx); err != nil {
		t.Fatal(err)
	}
	if got, _ := r.store.WorkbenchByID(ctx, wb.ID); got.State != models.StateQueued {
		t.Fatalf("expired early: %s", got.State)
	}
	r.advance(time.Second)
	if err := r.m.Drain(ctx); err != nil {
		t.Fatal(err)
	}
	got, _ := r.store.WorkbenchByID(ctx, wb.ID)
	if got.State != models.StateStopped || !strings.HasPrefix(got.Reason, "expired: waited 24 h in the queue for 1 × H100 80GB HBM3") {
		t.Fatalf("after the maximum wait: %s %q", got.State, got.Reason)
	}
	// A day later its owner is not watching: told, with a link.
	ns, err := r.store.ListNotifications(ctx, r.alice.ID, 10)
	if err != nil || len(ns) != 1 || ns[0].Message != "Workbench late: "+got.Reason || ns[0].Link != "/workbenches/"+wb.ID {
		t.Fatalf("owner's notifications %+v (%v)", ns, err)
	}
}

// queuedBehindAFullPool fills the pool with alice's workbenches and queues
// owner's launch "later"; its turn comes with freeOne, after whatever the
// test changes while it waits.
func (r *queueRig) queuedBehindAFullPool(t *testing.T, owner *models.User) (wb *models.Workbench, freeOne func()) {
	t.Helper()
	held := r.fill(t, r.alice, LaunchRequest{})
	if wb = r.launch(t, owner, "later", LaunchRequest{Queue: true}); wb.State != models.StateQueued {
		t.Fatalf("%s's launch is %s", owner.Username, wb.State)
	}
	return wb, func() {
		t.Helper()
		ctx := context.Background()
		if err := r.m.Stop(ctx, held[0].ID, "done"); err != nil {
			t.Fatal(err)
		}
		if err := r.m.Drain(ctx); err != nil {
			t.Fatal(err)
		}
	}
}

// In memory: a launch that waited in the queue and then cannot start (the
// engine refuses its container) is told to its owner.
func TestMemQueuedLaunchThatFailsToStartTellsTheOwner(t *testing.T) {
	t.Parallel()
	r := newQueueRig(t)
	ctx := context.Background()
	carol := r.user(t, "carol")
	wb, freeOne := r.queuedBehindAFullPool(t, carol)
	r.advance(10 * time.Minute)
	r.rt.Fail("Start", errors.New("no space left on device"))
	freeOne()
	got := r.waitState(t, wb.ID, models.StateFailed)
	var ns []models.Notification
	waitFor(t, func() bool { // told as the launch gives up
		ns, _ = r.store.ListNotifications(ctx, carol.ID, 10)
		return len(ns) > 0
	})
	if len(ns) != 1 || !strings.HasPrefix(ns[0].Message, "Workbench later could not start after 10 min in the queue: ") ||
		!strings.Contains(ns[0].Message, "no space left on device") || ns[0].Link != "/workbenches/"+wb.ID {
		t.Fatalf("owner's notifications %+v; the workbench says %q", ns, got.Reason)
	}
}

// In memory: a queued launch whose owner's monthly budget ran out while it
// waited is refused when its turn comes, and its owner, who is not
// watching, is told why.
func TestMemQueueRefusedAtItsTurnTellsTheOwner(t *testing.T) {
	t.Parallel()
	r := newQueueRig(t)
	ctx := context.Background()
	carol := r.user(t, "carol")
	wb, freeOne := r.queuedBehindAFullPool(t, carol)
	r.advance(time.Hour)
	spent := int64(0)
	if err := r.store.SetQuota(ctx, models.ScopeUser, carol.ID, models.Limits{BudgetPerMonthMicros: &spent}, "test"); err != nil {
		t.Fatal(err)
	}
	freeOne()
	got := r.waitState(t, wb.ID, models.StateFailed)
	if !strings.HasPrefix(got.Reason, "refused when its turn came: ") {
		t.Fatalf("reason %q", got.Reason)
	}
	ns, err := r.store.ListNotifications(ctx, carol.ID, 10)
	if err != nil || len(ns) != 1 || ns[0].Message != "Workbench later: "+got.Reason || ns[0].Link != "/workbenches/"+wb.ID {
		t.Fatalf("owner's notifications %+v (%v)", ns, err)
	}
}

// In memory: equal priority, the user with less recent GPU use goes first
// although they queued later; a higher class passes both.
func TestMemQueueOrdersByPriorityThenFairShare(t *testing.T) {
	t.Parallel()
	r := newQueueRig(t)
	ctx := context.Background()
	r.fill(t, r.alice, LaunchRequest{}) // alice holds 8 GPUs: heavy recent use
	r.advance(time.Hour)
	heavy := r.launch(t, r.alice, "heavy", LaunchRequest{Queue: true})
	r.advance(time.Second)
	carol := r.user(t, "carol")
	light := r.launch(t, carol, "light", LaunchRequest{Queue: true})
	r.advance(time.Second)
	batch := r.launch(t, carol, "batch", LaunchRequest{Queue: true, Priority: "batch"})
	if err := r.m.Drain(ctx); err != nil {
		t.Fatal(err)
	}
	pos := func(id string) int {
		wb, _ := r.store.WorkbenchByID(ctx, id)
		return wb.QueuePosition
	}
	if pos(light.ID) != 1 || pos(heavy.ID) != 2 || pos(batch.ID) != 3 {
		t.Fatalf("positions light %d heavy %d batch %d, want 1 2 3", pos(light.ID), pos(heavy.ID), pos(batch.ID))
	}
	if err := r.m.Stop(ctx, r.wb.ID, ""); err != nil {
		t.Fatal(err)
	}
	r.waitState(t, light.ID, models.StateRunning)
	// Users may not pick a class above the default.
	if _, err := r.m.Launch(ctx, carol, LaunchRequest{Name: "x", Image: "mem", Flavor: r.flavor, Priority: "nope"}); err == nil {
		t.Fatal("unknown class accepted")
	}
}

// In memory: a full pool of preemptible runs; an interactive launch that
// waits makes the newest one yield: notice file and reason at once, still
// running through the grace, then stopped "preempted" (home kept, billed to
// its exit at the preemptible rate); with auto-resume it queues again.
func TestMemPreemptionNoticeGraceAndAutoResume(t *testing.T) {
	t.Parallel()
	r := newQueueRig(t)
	ctx := context.Background()
	dave := r.user(t, "dave")
	victims := r.fillWithSpots(t, dave, true)
	newest := victims[6]
	if !newest.Preemptible || newest.Priority != "preemptible" {
		t.Fatalf("preemptible launch recorded as %q preemptible=%v", newest.Priority, newest.Preemptible)
	}
	if iv, err := r.store.OpenIntervalOf(ctx, newest.ID); err != nil || iv.Tier != pricing.TierPreemptible {
		t.Fatalf("interval tier %q (%v)", iv.Tier, err)
	}
	eve := r.user(t, "eve")
	want := r.launch(t, eve, "interactive", LaunchRequest{Queue: true})
	if want.State != models.StateQueued {
		t.Fatalf("interactive launch is %s", want.State)
	}
	got, _ := r.store.WorkbenchByID(ctx, newest.ID)
	if got.PreemptAt == nil || !got.PreemptAt.Equal(r.m.now().Add(120*time.Second)) {
		t.Fatalf("newest victim: preempt at %v", got.PreemptAt)
	}
	notice, ok := r.rt.HomeFile(got.ContainerID, PreemptFile(got.ID))
	if !ok || strings.TrimSpace(string(notice)) != got.PreemptAt.UTC().Format(time.RFC3339) {
		t.Fatalf("notice file %q (%v)", notice, ok)
	}
	for _, v := range victims[:6] {
		if w, _ := r.store.WorkbenchByID(ctx, v.ID); w.PreemptAt != nil {
			t.Fatalf("%s told to yield too: one GPU is needed", v.Name)
		}
	}
	// The waiting launch expects the GPU when the grace ends.
	expectAt := func(when string) {
		t.Helper()
		w, _ := r.store.WorkbenchByID(ctx, want.ID)
		if w.EstimatedStart == nil || !w.EstimatedStart.Equal(*got.PreemptAt) {
			t.Fatalf("%s: estimated start %v, want the grace's end %v", when, w.EstimatedStart, got.PreemptAt)
		}
	}
	expectAt("after the launch")
	// Its owner is told, in the top bar's notifications, with a link.
	notes := func(u *models.User) []models.Notification {
		t.Helper()
		ns, err := r.store.ListNotifications(ctx, u.ID, 10)
		if err != nil {
			t.Fatal(err)
		}
		return ns
	}
	if ns := notes(dave); len(ns) != 1 || !strings.Contains(ns[0].Message, "spot-6 must yield its GPUs") ||
		!strings.Contains(ns[0].Message, got.PreemptAt.UTC().Format("15:04")) || ns[0].Link != "/workbenches/"+newest.ID {
		t.Fatalf("victim's owner was told %+v", ns)
	}
	// Within the grace it runs on.
	r.advance(119 * time.Second)
	if err := r.m.Drain(ctx); err != nil {
		t.Fatal(err)
	}
	expectAt("a drain later")
	if w, _ := r.store.WorkbenchByID(ctx, newest.ID); w.State != models.StateRunning {
		t.Fatalf("stopped before the grace ended: %s", w.State)
	}
	// What the pages are told of the victim from here on.
	seen, unsubscribe := r.m.Events().Subscribe(newest.ID)
	defer unsubscribe()
	r.advance(time.Second)
	if err := r.m.Drain(ctx); err != nil {
		t.Fatal(err)
	}
	r.waitState(t, want.ID, models.StateRunning)
	fams := scrapeText(t, r.m)
	if n := queueSeries(t, fams, "workbench_preemptions_total", "", "").GetCounter().GetValue(); n != 1 {
		t.Errorf("workbench_preemptions_total %v, want 1", n)
	}
	assertWait(t, fams, QueuePlaced, 1, 120) // the interactive launch waited out the grace
	// Auto-resume: it went through preempted and is queued again.
	got = r.waitState(t, newest.ID, models.StateQueued)
	hist, _ := r.store.WorkbenchHistory(ctx, newest.ID)
	sawPreempted := false
	for _, h := range hist {
		sawPreempted = sawPreempted || (h.State == models.StatePreempted && strings.HasPrefix(h.Message, "preempted:"))
	}
	if !sawPreempted || len(got.GPUs) != 0 {
		t.Fatalf("history %+v, GPUs %v", hist, got.GPUs)
	}
	// ...in one step: nobody was shown it stopped as "preempted" (a page
	// would offer Start; the queue would not place it) before the requeue.
	var states []string
	for len(states) == 0 || states[len(states)-1] != models.StateQueued {
		select {
		case u := <-seen:
			states = append(states, u.State)
		case <-time.After(time.Minute):
			t.Fatalf("updates of the victim: %v, never queued", states)
		}
	}
	if slices.Contains(states, models.StatePreempted) {
		t.Fatalf("the victim was shown preempted before it was queued again: %v", states)
	}
	// The stop is told too; the interactive launch's owner, who waited out
	// the grace, is told it runs.
	waitFor(t, func() bool { // told just after the requeue
		ns := notes(dave)
		return len(ns) == 2 && strings.HasPrefix(ns[0].Message, "Workbench spot-6: preempted:")
	})
	waitFor(t, func() bool { // told just after the state turns running
		ns := notes(eve)
		return len(ns) == 1 && ns[0].Message == "Workbench interactive is running: it started after 2 min in the queue." && ns[0].Link == "/workbenches/"+want.ID
	})
	// Resumed when a GPU frees: the last run's notice is emptied.
	if err := r.m.Stop(ctx, victims[0].ID, ""); err != nil {
		t.Fatal(err)
	}
	resumed := r.waitState(t, newest.ID, models.StateRunning)
	waitFor(t, func() bool { // written just after the state turns running
		notice, ok := r.rt.HomeFile(resumed.ContainerID, PreemptFile(resumed.ID))
		return ok && len(notice) == 0
	})
	// Billed to the container's exit, at the preemptible tier.
	ivs, err := r.store.IntervalsOf(ctx, newest.ID)
	if err != nil || len(ivs) != 2 || ivs[0].EndedAt == nil || ivs[0].Tier != pricing.TierPreemptible || ivs[1].Tier != pricing.TierPreemptible {
		t.Fatalf("intervals %+v (%v)", ivs, err)
	}
	// A victim without auto-resume stays preempted; no non-preemptible run
	// was touched.
	if w, _ := r.store.WorkbenchByID(ctx, r.wb.ID); w.State != models.StateRunning {
		t.Fatalf("non-preemptible work was touched: %s", w.State)
	}
}

// In memory: the queue lives in the database: a manager started afresh on
// the same data (a portal restart) places what the previous one queued.
func TestMemQueueSurvivesARestart(t *testing.T) {
	t.Parallel()
	r := newQueueRig(t)
	ctx := context.Background()
	r.fill(t, r.alice, LaunchRequest{})
	wb := r.launch(t, r.alice, "patient", LaunchRequest{Queue: true})
	r.m.Wait()
	// A second manager on the same store and engine, as after a restart;
	// the GPU frees behind the first one's back (the container exits).
	m2 := NewManager(r.store, r.m.pool, r.rt, "memtest", Options{}, r.m.log)
	t.Cleanup(m2.Wait)
	m2.SetClock(r.m.clock)
	if err := r.rt.Stop(ctx, "c-"+r.wb.ID, 0); err != nil {
		t.Fatal(err)
	}
	if err := m2.Reconcile(ctx); err != nil { // finds the exit, frees the GPU, drains
		t.Fatal(err)
	}
	got := r.waitState(t, wb.ID, models.StateRunning)
	if len(got.GPUs) != 1 {
		t.Fatalf("placed after the restart with GPUs %v", got.GPUs)
	}
}

// In memory: a user whose quota allows only some images and flavors
// launches one of them with the queue; it waits, then starts when a GPU
// frees. At placement the queue used to check the allow-lists against an
// ask without names and failed it: "your quota does not allow the flavor
// """.
func TestMemQueuedLaunchWithAllowListsStarts(t *testing.T) {
	t.Parallel()
	r := newQueueRig(t)
	ctx := context.Background()
	r.fill(t, r.alice, LaunchRequest{})
	bob := r.user(t, "bob")
	if err := r.store.SetQuota(ctx, models.ScopeUser, bob.ID, models.Limits{AllowedImages: []string{"mem"}, AllowedFlavors: []string{r.flavor}}, "admin"); err != nil {
		t.Fatal(err)
	}
	wb := r.launch(t, bob, "allowed", LaunchRequest{Queue: true})
	if err := r.m.Drain(ctx); err != nil {
		t.Fatal(err)
	}
	if got, _ := r.store.WorkbenchByID(ctx, wb.ID); got.State != models.StateQueued {
		t.Fatalf("with every GPU held: %s %q, want queued", got.State, got.Reason)
	}
	if err := r.m.Stop(ctx, r.wb.ID, ""); err != nil {
		t.Fatal(err)
	}
	got := r.waitState(t, wb.ID, models.StateRunning, models.StateFailed)
	if got.State != models.StateRunning {
		t.Fatalf("placed from the queue: %s %q, want running", got.State, got.Reason)
	}
}

// In memory: the launch a preemptible run was told to yield for leaves the
// queue during the grace: the run is let off (no preempt_at, the notice
// file emptied, its owner told) and still runs after the grace would have
// ended.
func TestMemPreemptionRescindedWhenTheRequestLeaves(t *testing.T) {
	t.Parallel()
	r := newQueueRig(t)
	ctx := context.Background()
	dave := r.user(t, "dave")
	newest := r.fillWithSpots(t, dave, false)[6]
	eve := r.user(t, "eve")
	want := r.launch(t, eve, "interactive", LaunchRequest{Queue: true})
	if got, _ := r.store.WorkbenchByID(ctx, newest.ID); got.PreemptAt == nil {
		t.Fatal("the newest run was not told to yield")
	}
	r.advance(30 * time.Second)
	if err := r.m.Stop(ctx, want.ID, ""); err != nil { // she leaves the queue
		t.Fatal(err)
	}
	if err := r.m.Drain(ctx); err != nil {
		t.Fatal(err)
	}
	got, _ := r.store.WorkbenchByID(ctx, newest.ID)
	if got.PreemptAt != nil || got.Reason != "" {
		t.Fatalf("still told to yield after the request left: preempt at %v, reason %q", got.PreemptAt, got.Reason)
	}
	waitFor(t, func() bool { // emptied and told just after the drain
		notice, ok := r.rt.HomeFile(got.ContainerID, PreemptFile(got.ID))
		ns, _ := r.store.ListNotifications(ctx, dave.ID, 10)
		return ok && len(notice) == 0 && len(ns) == 2 && strings.Contains(ns[0].Message, "spot-6 no longer has to yield its GPUs")
	})
	r.advance(2 * time.Minute)
	if err := r.m.Drain(ctx); err != nil {
		t.Fatal(err)
	}
	if w, _ := r.store.WorkbenchByID(ctx, newest.ID); w.State != models.StateRunning {
		t.Fatalf("stopped after all: %s (%s)", w.State, w.Reason)
	}
}
