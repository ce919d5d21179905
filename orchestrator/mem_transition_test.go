package orchestrator

import (
	"context"
	"net/http"
	"testing"

	"workbench/models"
)

// A launch never overwrites a state someone else set while it ran: when
// the workbench was moved to stopping while the pipeline waited for
// Jupyter, Jupyter's answer no longer makes it running (the transition's
// compare-and-set refuses) and the launch ends without failing it.
func TestMemLaunchDoesNotOverwriteAStateChangedMeanwhile(t *testing.T) {
	t.Parallel()
	r := newMemRig(t)
	r.m.UseFirewall(&recordingFirewall{})
	answer := make(chan struct{})
	wb := launchOnMem(t, r, http.HandlerFunc(func(w http.ResponseWriter, req *http.Request) {
		<-answer
		_, _ = w.Write([]byte(`{}`))
	}))
	r.waitState(t, wb.ID, models.StateStarting)
	ctx := context.Background()
	if err := r.store.SetWorkbenchState(ctx, wb.ID, models.StateStopping, 10, "stopped elsewhere", nil); err != nil {
		t.Fatal(err)
	}
	close(answer)
	waitFor(t, func() bool { return !r.m.isLaunching(wb.ID) })
	got, err := r.store.WorkbenchByID(ctx, wb.ID)
	if err != nil {
		t.Fatal(err)
	}
	if got.State != models.StateStopping || got.Reason != "stopped elsewhere" || got.Endpoint != "" {
		t.Fatalf("after the launch ended: state %s (%q), endpoint %q; want stopping as set meanwhile", got.State, got.Reason, got.Endpoint)
	}
}
