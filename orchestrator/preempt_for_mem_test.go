package orchestrator

import (
	"context"
	"strings"
	"testing"
	"time"

	"workbench/models"
)

// In memory: the run told to yield, and then preempted, is told what the
// launch it yields to asked for (its class, the units it needs, how many
// were free): in the notice, the page's reason during the grace, the
// preempted reason and both notifications. They said only "a
// higher-priority launch", so a 4-GPU run taken for a launch one GPU short
// could not tell why.
func TestMemPreemptionNoticeSaysWhatTheLaunchNeeded(t *testing.T) {
	t.Parallel()
	r := newQueueRig(t)
	ctx := context.Background()
	dave := r.user(t, "dave")
	victims := r.fillWithSpots(t, dave, false)
	newest := victims[6]
	eve := r.user(t, "eve")
	want := r.launch(t, eve, "interactive", LaunchRequest{Queue: true})
	if want.State != models.StateQueued {
		t.Fatalf("interactive launch is %s", want.State)
	}
	got, _ := r.store.WorkbenchByID(ctx, newest.ID)
	fl, err := r.store.FlavorByNameOrID(ctx, r.flavor)
	if err != nil {
		t.Fatal(err)
	}
	clause := "priority interactive, 1 × " + strings.TrimPrefix(fl.GPUModel, "NVIDIA ") + " needed, 0 free"
	if got.PreemptAt == nil || got.PreemptFor != clause {
		t.Fatalf("victim told to yield at %v for %q, want %q", got.PreemptAt, got.PreemptFor, clause)
	}
	if !strings.Contains(got.Reason, "a higher-priority launch needs these GPUs ("+clause+"); this workbench stops at") {
		t.Errorf("reason during the grace: %q", got.Reason)
	}
	ns, err := r.store.ListNotifications(ctx, dave.ID, 10)
	if err != nil || len(ns) != 1 || !strings.HasPrefix(ns[0].Message, "Workbench spot-6 must yield its GPUs to higher-priority work: it stops at") ||
		!strings.HasSuffix(ns[0].Message, "It yields to a launch ("+clause+").") {
		t.Fatalf("notice to the victim's owner: %+v (%v)", ns, err)
	}
	r.advance(120 * time.Second)
	if err := r.m.Drain(ctx); err != nil {
		t.Fatal(err)
	}
	got = r.waitState(t, newest.ID, models.StatePreempted)
	if wantReason := "preempted: a higher-priority launch needed its GPUs (" + clause + "; its home is kept; start it again when you like)"; got.Reason != wantReason {
		t.Errorf("preempted reason %q, want %q", got.Reason, wantReason)
	}
	// The notice is over; what the launch needed stays on the preempted
	// workbench (its not-running page says it from there).
	if got.PreemptAt != nil || got.PreemptFor != "" || got.PreemptedFor != clause {
		t.Errorf("after the stop: preempt at %v for %q, preempted for %q; want the notice cleared and preempted for %q",
			got.PreemptAt, got.PreemptFor, got.PreemptedFor, clause)
	}
	waitFor(t, func() bool {
		ns, _ := r.store.ListNotifications(ctx, dave.ID, 10)
		return len(ns) == 2 && strings.Contains(ns[0].Message, "Workbench spot-6: preempted: a higher-priority launch needed its GPUs ("+clause+";")
	})
}
