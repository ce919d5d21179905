package templates_test

import (
	"strings"
	"testing"

	"workbench/templates"
)

// The Start form's queue box says what it is for on any workbench: a CPU
// flavor's start waits too (for the owner's other workbenches, under a
// concurrency limit), and "if none is free" spoke only of GPUs.
func TestStartQueueCheckWording(t *testing.T) {
	doc := render(t, templates.StartQueueCheck())
	if got := strings.TrimSpace(doc.Find("label").Text()); got != "if it cannot start now, wait in the queue" {
		t.Errorf("queue box label %q", got)
	}
}
