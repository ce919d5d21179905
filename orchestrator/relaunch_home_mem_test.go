package orchestrator

import (
	"context"
	"errors"
	"io"
	"log/slog"
	"testing"

	"workbench/models"
	"workbench/orchestrator/runtime"
)

// stalledPrepareHome is an engine on which the portal process dies while
// giving a fresh home volume to the image's user.
type stalledPrepareHome struct {
	runtime.Runtime
	*gate
}

func (s *stalledPrepareHome) PrepareHome(ctx context.Context, cid, homePath, user string) error {
	s.hold()
	return errors.New("the process was killed")
}

// A user's first launch cut short after its home volume was made and
// before it was given to the image's user: the next process takes the
// launch up and prepares the home (it took the volume, no longer fresh,
// as prepared, and the user could not write to it, for good).
func TestMemLaunchCutShortBeforeTheHomeWasPreparedPreparesIt(t *testing.T) {
	t.Parallel()
	r := newQueueRig(t)
	ctx := context.Background()
	stall := &stalledPrepareHome{Runtime: r.rt, gate: newGate()}
	first := NewManager(r.store, r.m.pool, stall, "memtest", r.m.opt, slog.New(slog.NewTextHandler(io.Discard, nil)))
	first.SetClock(r.m.now)
	t.Cleanup(func() { stall.open(); first.Wait() })
	frank := r.user(t, "frank")
	wb, err := first.Launch(ctx, frank, LaunchRequest{Name: "first", Image: "mem", Flavor: r.flavor})
	if err != nil {
		t.Fatal(err)
	}
	stall.arrived(t, "the launch reaching the home's preparation")
	before := r.rt.Calls("PrepareHome")
	// The next process.
	if err := r.m.Reconcile(ctx); err != nil {
		t.Fatal(err)
	}
	got := r.waitState(t, wb.ID, models.StateRunning, models.StateFailed)
	if got.State != models.StateRunning {
		t.Fatalf("the launch taken up ended %s: %s", got.State, got.Reason)
	}
	if r.rt.Calls("PrepareHome") == before {
		t.Fatal("the launch taken up did not prepare the home its first process made")
	}
}
