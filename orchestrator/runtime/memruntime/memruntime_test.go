package memruntime

import (
	"context"
	"errors"
	"testing"
	"time"

	"workbench/orchestrator/runtime"
)

func TestLifecycleEventsAndExitCodes(t *testing.T) {
	t.Parallel()
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	at := time.Date(2026, 1, 2, 3, 4, 5, 0, time.UTC)
	r := New()
	r.SetClock(func() time.Time { return at })
	evs, errs := r.Events(ctx, "inst")
	if _, err := r.Create(ctx, runtime.Spec{WorkbenchID: "w1", InstallID: "inst", Name: "c1", Image: "img:1"}); err == nil {
		t.Fatal("created a container from an image that is not present")
	}
	var steps []int
	if err := r.EnsureImage(ctx, "img:1", func(pct int, _ string) { steps = append(steps, pct) }); err != nil {
		t.Fatal(err)
	}
	if len(steps) != 2 || steps[1] != 100 {
		t.Errorf("pull progress %v, want 0 then 100", steps)
	}
	id, err := r.Create(ctx, runtime.Spec{WorkbenchID: "w1", InstallID: "inst", Name: "c1", Image: "img:1", Network: "net", Port: 8888})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := r.Create(ctx, runtime.Spec{WorkbenchID: "w1", InstallID: "inst", Name: "c1", Image: "img:1"}); !errors.Is(err, runtime.ErrConflict) {
		t.Errorf("second create with the same name: %v, want ErrConflict", err)
	}
	if err := r.Start(ctx, id); err != nil {
		t.Fatal(err)
	}
	info, _ := r.Inspect(ctx, "c1")
	if host, port := r.Endpoint(info, "net"); host == "" || port != 8888 || !info.StartedAt.Equal(at) {
		t.Errorf("running container: endpoint %s:%d, started %v", host, port, info.StartedAt)
	}
	r.SetStopExitCode(143)
	if err := r.Stop(ctx, id, time.Second); err != nil {
		t.Fatal(err)
	}
	if err := r.Remove(ctx, id); err != nil {
		t.Fatal(err)
	}
	want := []string{runtime.ActionStart, runtime.ActionDie, runtime.ActionDestroy}
	for _, action := range want {
		ev := <-evs
		if ev.Action != action || ev.WorkbenchID != "w1" || !ev.Time.Equal(at) {
			t.Errorf("event %+v, want %s of w1 at %v", ev, action, at)
		}
		if action == runtime.ActionDie && ev.ExitCode != 143 {
			t.Errorf("die exit code %d, want 143", ev.ExitCode)
		}
	}
	if _, err := r.Inspect(ctx, id); !errors.Is(err, runtime.ErrNotFound) {
		t.Errorf("inspect after remove: %v", err)
	}
	cancel()
	if _, ok := <-evs; ok {
		t.Error("event stream still open after its context ended")
	}
	if err := <-errs; err != nil {
		t.Errorf("stream error after cancel: %v", err)
	}
}

func TestInjectedFailuresAndPullPlans(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	r := New()
	boom := errors.New("boom")
	r.FailOnce("Ping", boom)
	if err := r.Ping(ctx); !errors.Is(err, boom) {
		t.Errorf("first ping: %v, want boom", err)
	}
	if err := r.Ping(ctx); err != nil {
		t.Errorf("second ping: %v, want nil (FailOnce)", err)
	}
	r.Fail("List", runtime.ErrEngineUnavailable)
	for range 2 {
		if _, err := r.List(ctx, "x"); !errors.Is(err, runtime.ErrEngineUnavailable) {
			t.Errorf("list: %v, want ErrEngineUnavailable", err)
		}
	}
	denied := errors.New("pull access denied")
	r.PlanPull("big:1", []runtime.PullProgress{{Percent: 10, DoneBytes: 10, TotalBytes: 100}, {Percent: 50, DoneBytes: 50, TotalBytes: 100}}, denied)
	var got []int64
	if err := r.PullImage(ctx, "big:1", func(p runtime.PullProgress) { got = append(got, p.DoneBytes) }); !errors.Is(err, denied) {
		t.Errorf("pull: %v, want the planned failure", err)
	}
	if len(got) != 2 || got[1] != 50 {
		t.Errorf("progress %v, want 10 then 50", got)
	}
	if present, _, _ := r.ImageSize(ctx, "big:1"); present {
		t.Error("a failed pull left the image present")
	}
	if r.Calls("List") != 2 || r.Calls("PullImage") != 1 {
		t.Errorf("calls: List %d, PullImage %d", r.Calls("List"), r.Calls("PullImage"))
	}
}
