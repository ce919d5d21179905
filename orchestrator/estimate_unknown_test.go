package orchestrator

import (
	"strings"
	"testing"
	"time"

	"workbench/models"
	"workbench/orchestrator/scheduler"
)

// Every code a drain stores for a queued workbench without an estimate has
// a clause of its own and is given back as the API's code; the clause
// reads after "unknown — " (no "no estimate:" of its own, which printed
// "Estimated start: no estimate: …", two colons). The code stored before
// the codes reads as held_without_end; an estimate, another state or an
// unknown code gives neither.
func TestEstimateUnknownCodeAndText(t *testing.T) {
	for _, code := range []string{scheduler.NoEstimateHeldWithoutEnd, scheduler.NoEstimateOutOfService, scheduler.NoEstimateOwnerQuota,
		scheduler.NoEstimateServerLayout, scheduler.NoEstimateQueueAhead} {
		wb := &models.Workbench{State: models.StateQueued, EstimateUnknown: code}
		text := EstimateUnknownText(wb)
		if EstimateUnknownCode(wb) != code || text == "" || strings.Contains(text, ":") {
			t.Errorf("%s: code %q, text %q", code, EstimateUnknownCode(wb), text)
		}
	}
	old := &models.Workbench{State: models.StateQueued, EstimateUnknown: models.EstimateNoMaxRuntime}
	if EstimateUnknownCode(old) != "held_without_end" || EstimateUnknownText(old) != "the workbenches holding these GPUs have no maximum runtime" {
		t.Errorf("stored before the codes: %q, %q", EstimateUnknownCode(old), EstimateUnknownText(old))
	}
	at := time.Now()
	for name, wb := range map[string]*models.Workbench{
		"an estimate":  {State: models.StateQueued, EstimateUnknown: scheduler.NoEstimateHeldWithoutEnd, EstimatedStart: &at},
		"running":      {State: models.StateRunning, EstimateUnknown: scheduler.NoEstimateHeldWithoutEnd},
		"unknown code": {State: models.StateQueued, EstimateUnknown: "from_the_future"},
		"none":         {State: models.StateQueued},
	} {
		if c, w := EstimateUnknownCode(wb), EstimateUnknownText(wb); c != "" || w != "" {
			t.Errorf("%s: code %q, text %q, want neither", name, c, w)
		}
	}
}
