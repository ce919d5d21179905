package simulate

import (
	"context"
	"io"
	"log/slog"
	"testing"
	"time"

	"workbench/models"
)

// seedRun records, on a real SQLite file, a workbench of user asked for at
// asked (its "queued" event) whose GPU run lasted [start, end) (end zero:
// still running).
func seedRun(t *testing.T, store *models.Store, clock *time.Time, user *models.User, imgID int64, fl *models.Flavor, name, priority, tier string,
	asked, start, end time.Time) {
	t.Helper()
	ctx := context.Background()
	*clock = asked
	wb := &models.Workbench{Name: name, OwnerID: user.ID, ImageID: imgID, FlavorID: fl.ID, Token: "t", Priority: priority}
	if err := store.EnqueueWorkbench(ctx, wb, nil); err != nil {
		t.Fatal(err)
	}
	kind := fl.UnitKind
	if kind == "" {
		kind = models.UnitGPU
	}
	iv := &models.UsageInterval{WorkbenchID: wb.ID, UserID: user.ID, GPUModel: fl.GPUModel, GPUCount: fl.GPUCount, UnitKind: kind,
		UnitProfile: fl.MIGProfile, Tier: tier, CPUMilli: 1000, MemoryMiB: 1024, StartedAt: start}
	if err := store.OpenInterval(ctx, iv); err != nil {
		t.Fatal(err)
	}
	if !end.IsZero() {
		if err := store.CloseInterval(ctx, wb.ID, end, "stopped"); err != nil {
			t.Fatal(err)
		}
	}
}

// "Replay the last 30 days": the trace is built from the metered runs of a
// real SQLite file — arrivals at the request (the queued event), durations
// as run (an open run to now), units by kind (a MIG 3g instance is 3/7 of a
// GPU, a slice 1/slices), classes and the preemptible tier kept; older runs
// and another model's left out. It then replays in the portal.
func TestSimulateLedgerTraceFromRealRuns(t *testing.T) {
	ctx := context.Background()
	store, err := models.Open(ctx, t.TempDir(), slog.New(slog.NewTextHandler(io.Discard, nil)))
	if err != nil {
		t.Fatal(err)
	}
	defer store.Close()
	to := time.Date(2026, 11, 30, 12, 0, 0, 0, time.UTC)
	clock := to
	store.SetClock(func() time.Time { return clock })
	img := &models.Image{Name: "img", Image: "img:1", StartCommand: "jupyter lab --port={port} --ServerApp.base_url={base_url} --IdentityProvider.token={token}",
		RunAsUser: "1000", HomePath: "/home/jovyan", Enabled: true}
	if err := store.CreateImage(ctx, img); err != nil {
		t.Fatal(err)
	}
	h100 := "NVIDIA H100 80GB HBM3"
	flavor := func(name, model string, n int, kind, profile string) *models.Flavor {
		f := &models.Flavor{Name: name, GPUModel: model, GPUCount: n, UnitKind: kind, MIGProfile: profile, CPUMilli: 1000, MemoryMiB: 1024, Enabled: true}
		if err := store.CreateFlavor(ctx, f); err != nil {
			t.Fatal(err)
		}
		return f
	}
	whole, two := flavor("whole", h100, 1, "", ""), flavor("two", h100, 2, "", "")
	mig := flavor("mig3", h100, 1, models.UnitMIG, "3g.40gb")
	slice := flavor("slice", h100, 1, models.UnitSlice, "")
	a100 := flavor("a100", "NVIDIA A100-SXM4-80GB", 1, "", "")
	users := map[string]*models.User{}
	for _, n := range []string{"alice", "bob", "carol", "dave"} {
		if users[n], err = store.CreateUser(ctx, models.NewUser{Username: n, Password: n + "-password", Role: "user"}); err != nil {
			t.Fatal(err)
		}
	}
	d := 24 * time.Hour
	seedRun(t, store, &clock, users["alice"], img.ID, whole, "a", "batch", "", to.Add(-10*d), to.Add(-10*d+30*time.Minute), to.Add(-10*d+150*time.Minute))
	seedRun(t, store, &clock, users["bob"], img.ID, mig, "b", "interactive", "", to.Add(-5*d), to.Add(-5*d), to.Add(-5*d+time.Hour))
	seedRun(t, store, &clock, users["carol"], img.ID, slice, "c", "interactive", "", to.Add(-3*d), to.Add(-3*d), time.Time{})
	seedRun(t, store, &clock, users["dave"], img.ID, two, "d", "preemptible", "preemptible", to.Add(-2*d), to.Add(-2*d), to.Add(-2*d+4*time.Hour))
	seedRun(t, store, &clock, users["dave"], img.ID, whole, "old", "interactive", "", to.Add(-40*d), to.Add(-40*d), to.Add(-40*d+time.Hour))
	seedRun(t, store, &clock, users["bob"], img.ID, a100, "other", "interactive", "", to.Add(-d), to.Add(-d), to.Add(-d+time.Hour))

	tr, model, err := LedgerTrace(ctx, store, to.Add(-30*d), to, "", 4)
	if err != nil || model != h100 {
		t.Fatalf("trace of %q: %v", model, err)
	}
	want := Trace{
		{ID: "j0001", Arrival: 20 * d, User: "alice", GPUs: 1, Duration: 2 * time.Hour, Priority: "batch"},
		{ID: "j0002", Arrival: 25 * d, User: "bob", GPUs: 3.0 / 7, Duration: time.Hour, Priority: "interactive"},
		{ID: "j0003", Arrival: 27 * d, User: "carol", GPUs: 0.25, Duration: 3 * d, Priority: "interactive"},
		{ID: "j0004", Arrival: 28 * d, User: "dave", GPUs: 2, Duration: 4 * time.Hour, Priority: "preemptible", Preemptible: true},
	}
	if len(tr) != len(want) {
		t.Fatalf("trace %+v", tr)
	}
	for i := range want {
		if tr[i] != want[i] {
			t.Errorf("job %d: %+v, want %+v", i, tr[i], want[i])
		}
	}
	if other, m, err := LedgerTrace(ctx, store, to.Add(-30*d), to, "A100-SXM4-80GB", 4); err != nil || len(other) != 1 || m != "NVIDIA A100-SXM4-80GB" {
		t.Fatalf("the A100's trace: %+v %q %v", other, m, err)
	}
	if _, _, err := LedgerTrace(ctx, store, to.Add(-30*d), to, "B200", 4); err == nil {
		t.Fatal("a model with no runs gave a trace")
	}
	// Replayed in the portal with GPU 0 split into MIG 3g.40gb: bob's
	// instance is a MIG run, everything agrees with the portal's records.
	cfg := DefaultConfig()
	if cfg.MIG, err = ParseMIG([]string{"0:3g.40gb"}); err != nil {
		t.Fatal(err)
	}
	r, err := RunPortal(ctx, tr, FairPreemptSharing, cfg)
	if err != nil {
		t.Fatal(err)
	}
	st := starts(r)
	if len(st) != 4 || st["j0002"][0] != 25*d || st["j0001"][0] != 20*d || r.Unfinished != 0 || r.Portal.Intervals != 4 {
		t.Fatalf("replay: starts %v, unfinished %d, portal %+v", st, r.Unfinished, r.Portal)
	}
	for _, e := range r.Log {
		if e.Job == "j0002" && e.Kind == EvStart && string(e.Pool) != "mig|3g.40gb|"+h100 {
			t.Fatalf("bob's run replayed on %s", e.Pool)
		}
	}
}
