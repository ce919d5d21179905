package orchestrator

import (
	"context"
	"io"
	"log/slog"
	"testing"
	"time"

	"workbench/orchestrator/gpu"
	"workbench/orchestrator/runtime"
	"workbench/orchestrator/runtime/memruntime"
)

// TestRunDutiesDoNotWaitForEachOther on the in-memory engine: with storage
// metering stuck, periodic reconciliation still removes an orphan once its
// grace is over. (The real-engine version stays in run_test.go.)
func TestMemRunDutiesDoNotWaitForEachOther(t *testing.T) {
	t.Parallel()
	rt := memruntime.New()
	const install, grace = "memrun", 20 * time.Millisecond
	stuck := &enteredStuckVolumes{Runtime: rt, entered: make(chan struct{}, 1)}
	stop, done := runMemManager(t, stuck, install, Options{
		ReconcileEvery: 10 * time.Millisecond,
		OrphanGrace:    grace,
		StorageEvery:   5 * time.Millisecond,
	})
	// Storage metering is stuck from here on (its first call never
	// returns); only then the orphan appears, so only a periodic
	// reconciliation running beside it can remove it.
	<-stuck.entered
	orphan := rt.AddContainer(runtime.ContainerInfo{Name: "/wb-" + install + "-orphan", State: "created", Created: time.Now(),
		Labels: map[string]string{runtime.LabelInstall: install, runtime.LabelID: "nosuchworkbench",
			runtime.LabelOwner: "nobody", runtime.LabelKind: runtime.KindWorkbench}})
	waitFor(t, func() bool { _, ok := rt.Container(orphan); return !ok })
	stop()
	<-done
}

// runMemManager runs a manager of install on rt (a fresh store, no GPUs)
// until stop is called; done closes when Run has returned.
func runMemManager(t *testing.T, rt runtime.Runtime, install string, opt Options) (stop context.CancelFunc, done chan struct{}) {
	t.Helper()
	log := slog.New(slog.NewTextHandler(io.Discard, nil))
	store := openStore(t, log)
	inv, err := gpu.New(gpu.Mode{Kind: gpu.KindNone})
	if err != nil {
		t.Fatal(err)
	}
	m := NewManager(store, NewPool(inv, nil, store), rt, install, opt, log)
	m.UseFirewall(&recordingFirewall{})
	runCtx, stop := context.WithCancel(context.Background())
	done = make(chan struct{})
	go func() { m.Run(runCtx); close(done) }()
	return stop, done
}

// enteredStuckVolumes is stuckVolumes that says when metering got stuck.
type enteredStuckVolumes struct {
	runtime.Runtime
	entered chan struct{}
}

func (s *enteredStuckVolumes) VolumeSizes(ctx context.Context, _ string) ([]runtime.VolumeUsage, error) {
	select {
	case s.entered <- struct{}{}:
	default:
	}
	<-ctx.Done()
	return nil, ctx.Err()
}

// A save cut short whose commit the engine finished only after the next
// process started (its start-up pass found nothing yet) is removed by a
// later pass, while that process runs, not at the restart after.
func TestMemRunRemovesASaveThatLandsLate(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	rt := memruntime.New()
	const install = "memsave"
	stop, done := runMemManager(t, rt, install, Options{ReconcileEvery: 10 * time.Millisecond})
	defer func() { stop(); <-done }()
	waitFor(t, func() bool { return rt.Calls("SavedImages") > 0 }) // the start's pass is over
	ref := "workbench-saved/" + install + "/u1-late:v1"
	c := rt.AddContainer(runtime.ContainerInfo{Name: "/src", State: "running", Running: true})
	if _, err := rt.Commit(ctx, c, runtime.CommitSpec{Ref: ref, Labels: map[string]string{
		runtime.LabelKind: runtime.KindSavedImage, runtime.LabelInstall: install, runtime.LabelSavedFrom: "gone"}}); err != nil {
		t.Fatal(err)
	}
	waitFor(t, func() bool { present, _, _ := rt.ImageSize(ctx, ref); return !present })
}
