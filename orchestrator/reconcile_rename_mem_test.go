package orchestrator

import (
	"context"
	"testing"

	"workbench/models"
)

// A running workbench's container renamed behind the portal's back (`docker
// rename`) is still the workbench's: reconciliation keeps it running with
// its GPU and its meter. Looked up by name, it read as vanished: the run
// was closed at its last heartbeat and its GPU given to the queue while the
// container still used it.
func TestMemReconcileKeepsARenamedContainer(t *testing.T) {
	t.Parallel()
	r := newMemRig(t)
	ctx := context.Background()
	r.rt.Rename("c-"+r.wb.ID, "someone-renamed-it")
	if err := r.m.Reconcile(ctx); err != nil {
		t.Fatal(err)
	}
	r.m.Wait()
	wb, err := r.store.WorkbenchByID(ctx, r.wb.ID)
	if err != nil {
		t.Fatal(err)
	}
	if wb.State != models.StateRunning || len(wb.GPUs) != 1 {
		t.Fatalf("after reconciling a renamed container: %s (%q), GPUs %v; want running with its GPU", wb.State, wb.Reason, wb.GPUs)
	}
	if _, err := r.store.OpenIntervalOf(ctx, r.wb.ID); err != nil {
		t.Fatalf("its usage interval was closed: %v", err)
	}
	// Its stop stops the container itself (it was taken for gone and left
	// running, holding the GPU the portal had freed).
	if err := r.m.Stop(ctx, r.wb.ID, ""); err != nil {
		t.Fatal(err)
	}
	r.assertStopped(t)
}
