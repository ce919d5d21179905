package web_test

import (
	"context"
	"testing"
	"time"

	"workbench/models"
)

// Closing the portal ends the launches it is driving before it closes the
// database: Close returns with no launch pipeline left running (one went
// on after Close, and made the install's network after a test had removed
// its objects: a leaked network), the workbench's record stays where the
// launch left it, and the next start takes the launch up and runs it to
// its end, as an accepted launch must.
func TestCloseEndsLaunchesAndTheNextStartFinishesThem(t *testing.T) {
	r := newLCRig(t)
	ctx := context.Background()
	code, wb := r.p.api("POST", "/api/v1/workbenches", r.token, `{"name":"cut","image":"`+lcGatedImage+`","flavor":"`+lcGPUFlavor+`"}`)
	if code != 202 {
		t.Fatalf("launch: %d %v", code, wb)
	}
	id := wb["id"].(string)
	// The gate is shut: the container runs and the launch waits for its
	// Jupyter to answer (for up to the ready timeout, 10 minutes).
	waitState(t, r.p, r.token, id, models.StateStarting)

	r.p.close()
	ended := make(chan struct{})
	go func() { r.p.srv.Manager.Wait(); close(ended) }()
	select {
	case <-ended:
	case <-time.After(time.Minute): // Close itself has returned: nothing should be left to wait for
		t.Fatal("a launch pipeline is still running after the portal was closed")
	}

	next := r.p.restart()
	held, err := next.srv.Store.WorkbenchByID(ctx, id)
	if err != nil {
		t.Fatal(err)
	}
	if held.State != models.StateStarting || len(held.GPUs) == 0 {
		t.Fatalf("after Close the record is %s with GPUs %v; want it left starting, its GPUs held", held.State, held.GPUs)
	}
	if err := next.srv.Manager.Reconcile(ctx); err != nil {
		t.Fatal(err)
	}
	r.p = next
	r.openLaunchGate(t, id)
	waitState(t, next, r.token, id, models.StateRunning)
	r.assertRunning(t, id)
}
