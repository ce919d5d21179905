package orchestrator

import (
	"context"
	"net/http"
	"testing"
	"time"

	"workbench/models"
	"workbench/orchestrator/runtime"
)

// TestMemReconcileResumesAPendingLaunch: a launch left "starting" by a
// previous portal whose container the engine accepted but has not started
// (a Kubernetes Pod waiting for a node: runtime.StatePending) is resumed,
// not failed; it shows the engine's reason, and runs once the container
// does.
func TestMemReconcileResumesAPendingLaunch(t *testing.T) {
	t.Parallel()
	r := newMemRig(t)
	ctx := context.Background()
	serveJupyterOn(t, r, http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) {}))
	// The previous portal's container, accepted but not started.
	old := "c-" + r.wb.ID
	info, _ := r.rt.Container(old)
	r.rt.Vanish(old, false)
	info.Running, info.State, info.Error = false, runtime.StatePending, "0/3 nodes are available: 3 Insufficient nvidia.com/gpu."
	r.rt.AddContainer(info)
	if err := r.store.SetWorkbenchState(ctx, r.wb.ID, models.StateStarting, 85, "", nil); err != nil {
		t.Fatal(err)
	}
	if err := r.m.Reconcile(ctx); err != nil {
		t.Fatal(err)
	}
	deadline := time.Now().Add(time.Minute)
	for {
		wb, err := r.store.WorkbenchByID(ctx, r.wb.ID)
		if err != nil {
			t.Fatal(err)
		}
		if wb.State != models.StateStarting {
			t.Fatalf("the pending launch is %s (%s), want still starting", wb.State, wb.Reason)
		}
		if wb.Reason == PendingReasonPrefix+info.Error {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("reason %q, want the engine's", wb.Reason)
		}
		time.Sleep(10 * time.Millisecond)
	}
	// The node frees up: the container starts, the launch finishes.
	if err := r.rt.Start(ctx, old); err != nil {
		t.Fatal(err)
	}
	if wb := r.waitState(t, r.wb.ID, models.StateRunning, models.StateFailed); wb.State != models.StateRunning || wb.Reason != "" {
		t.Fatalf("after the start: %s %q, want running with no reason", wb.State, wb.Reason)
	}
}
