package orchestrator

import (
	"testing"

	"workbench/models"
)

// In memory: a workbench the drain places is not announced as queued
// after its "requested": the drain's closing "queued" updates, for those
// whose place may have moved, went to every workbench it had read as
// queued, the placed ones too, and an event stream saw it go back.
func TestMemPlacedLaunchIsNotAnnouncedQueuedAgain(t *testing.T) {
	t.Parallel()
	r := newQueueRig(t)
	carol := r.user(t, "carol")
	wb, freeOne := r.queuedBehindAFullPool(t, carol)
	updates, cancel := r.m.Events().Subscribe(wb.ID)
	defer cancel()
	freeOne()
	r.waitState(t, wb.ID, models.StateRunning)
	var states []string
	placed := false
	for {
		u := <-updates
		states = append(states, u.State)
		if u.State == models.StateRequested {
			placed = true
		} else if placed && u.State == models.StateQueued {
			t.Fatalf("updates %v: queued again after it was placed", states)
		}
		if u.State == models.StateRunning {
			break
		}
	}
	if !placed {
		t.Fatalf("updates %v: no requested", states)
	}
}
