package templates_test

import (
	"strings"
	"testing"

	"workbench/templates"
)

// A queued workbench's notice gives the estimated start on a line of its
// own: run into the next sentence it read "unknown (…) Waiting is free".
func TestQueueNoticeEstimateStandsAlone(t *testing.T) {
	doc := render(t, templates.QueueNotice(templates.WorkbenchRow{State: "queued", QueuePosition: 1,
		EstimatedStart: "unknown (nothing it waits for has a known end time)"}))
	line := strings.Join(strings.Fields(doc.Find(`[data-testid=queue-estimate]`).Parent().Text()), " ")
	if line != "Estimated start: unknown (nothing it waits for has a known end time)" {
		t.Errorf("the estimate's line reads %q", line)
	}
}
