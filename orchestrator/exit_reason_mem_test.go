package orchestrator

import (
	"context"
	"testing"
	"time"
)

// A container the portal did not ask to stop, found exited: an operator's
// `docker stop` (Jupyter exits 0 on SIGTERM; the engine's history has the
// kill) or `docker kill` (code 137, or 143 for SIGTERM) reads "stopped
// outside the portal", not "the container exited (code N)", which read as
// the owner's code crashing. A process that exited on its own keeps its
// code; running out of memory keeps its own words.
func TestMemExitReasonTellsAStopOutsideThePortal(t *testing.T) {
	t.Parallel()
	const outside = "stopped outside the portal (by the server's operator or the engine)"
	for _, tc := range []struct {
		name string
		end  func(r *memRig) error
		want string
	}{
		{"docker stop, exit 0", func(r *memRig) error { return r.rt.Stop(context.Background(), "c-"+r.wb.ID, time.Second) }, outside},
		{"docker kill", func(r *memRig) error { return r.rt.Exit("c-"+r.wb.ID, 137, false) }, outside},
		{"SIGTERM", func(r *memRig) error { return r.rt.Exit("c-"+r.wb.ID, 143, false) }, outside},
		{"exited on its own", func(r *memRig) error { return r.rt.Exit("c-"+r.wb.ID, 0, false) }, "the container exited (code 0)"},
		{"crashed", func(r *memRig) error { return r.rt.Exit("c-"+r.wb.ID, 1, false) }, "the container exited (code 1)"},
		{"out of memory", func(r *memRig) error { return r.rt.Exit("c-"+r.wb.ID, 137, true) }, "the container ran out of memory and was killed"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			r := newMemRig(t)
			if err := tc.end(r); err != nil {
				t.Fatal(err)
			}
			if err := r.m.Reconcile(context.Background()); err != nil {
				t.Fatal(err)
			}
			r.assertStopped(t)
			if wb := r.record(t); wb.Reason != tc.want {
				t.Errorf("reason %q, want %q", wb.Reason, tc.want)
			}
		})
	}
}

// A run after one the portal stopped, which then exits on its own, is not
// taken for a stop from outside: the portal's kill belongs to the run
// before.
func TestMemExitAfterThePortalsStopIsTheProcesssOwn(t *testing.T) {
	t.Parallel()
	r := newMemRig(t)
	ctx := context.Background()
	wb := launchOnMem(t, r, answersJupyter)
	if got := r.waitState(t, wb.ID, "running", "failed"); got.State != "running" {
		t.Fatalf("launch ended %s: %s", got.State, got.Reason)
	}
	if err := r.m.Stop(ctx, wb.ID, ""); err != nil {
		t.Fatal(err)
	}
	owner, err := r.store.UserByID(ctx, wb.OwnerID)
	if err != nil {
		t.Fatal(err)
	}
	if err := r.m.Stop(ctx, r.wb.ID, ""); err != nil { // its GPU for the start
		t.Fatal(err)
	}
	// The engine's clock moves on between the stop and the start.
	later := time.Now().UTC().Add(10 * time.Second)
	r.rt.SetClock(func() time.Time { return later })
	if err := r.m.Start(ctx, wb.ID, owner); err != nil {
		t.Fatal(err)
	}
	if got := r.waitState(t, wb.ID, "running", "failed"); got.State != "running" {
		t.Fatalf("start ended %s: %s", got.State, got.Reason)
	}
	cur, err := r.store.WorkbenchByID(ctx, wb.ID)
	if err != nil {
		t.Fatal(err)
	}
	r.rt.SetClock(func() time.Time { return later.Add(time.Minute) })
	if err := r.rt.Exit(cur.ContainerID, 0, false); err != nil {
		t.Fatal(err)
	}
	// Reconciliation leaves a workbench alone while the start that made it
	// running still holds it (a busy machine may be slow to let go): look
	// again until it has decided.
	deadline := time.Now().Add(time.Minute)
	for {
		if err := r.m.Reconcile(ctx); err != nil {
			t.Fatal(err)
		}
		if now, err := r.store.WorkbenchByID(ctx, wb.ID); err != nil || now.State == "stopped" || time.Now().After(deadline) {
			break
		}
		time.Sleep(time.Millisecond)
	}
	got := r.waitState(t, wb.ID, "stopped")
	if got.Reason != "the container exited (code 0)" {
		t.Errorf("reason %q, want the container exited (code 0)", got.Reason)
	}
}
