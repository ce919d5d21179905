package web_test

import (
	"context"
	"net/http"
	"strings"
	"testing"

	"workbench/models"
)

// In Chromium, JavaScript on and off: the notebook tab of a run that
// auto-resume put back in the queue after a preemption says what the
// launch it yielded to asked for (kept by the requeue, preempted_for),
// with its place in the queue. It said only "a higher-priority launch".
func TestBrowserQueuedToResumeSaysWhatItYieldedTo(t *testing.T) {
	const needed = "priority interactive, 2 × H100 80GB HBM3 needed, 0 free"
	for _, js := range []bool{true, false} {
		t.Run(jsName(js), func(t *testing.T) {
			p := newPortal(t)
			ctx := context.Background()
			tokenFor(t, p, "alice", "user")
			alice, err := p.srv.Store.UserByUsername(ctx, "alice")
			if err != nil {
				t.Fatal(err)
			}
			wb := p.runningRecord(alice, "nightly", models.GPUNeed{})
			// As the preemption's stop and auto-resume's requeue leave it.
			if err := p.srv.Store.SetWorkbenchState(ctx, wb.ID, models.StateQueued, 0, "preempted; waiting to resume",
				map[string]any{"preempted_for": needed, "auto_resume": true}); err != nil {
				t.Fatal(err)
			}
			b := btSignedIn(t, js, p.ts.URL, "alice", "alice-password")
			if resp := btNavigate(t, b, p.ts.URL+"/wb/"+wb.ID+"/"); resp.Status != http.StatusServiceUnavailable {
				t.Fatalf("the notebook tab of a queued workbench: %d, want 503", resp.Status)
			}
			why := btText(t, b, `[data-testid=not-running][data-state=queued] [data-testid=not-running-why]`)
			if !strings.HasPrefix(why, "It was preempted: a higher-priority launch needed its GPUs ("+needed+"). It waits in the queue to resume") {
				t.Errorf("the tab reads %q, want what the launch it yielded to asked for", why)
			}
			if !btVisible(t, b, `[data-testid=not-running-why]`) {
				t.Error("the sentence is not visible")
			}
		})
	}
}
