package orchestrator

import (
	"context"
	"strings"

	"workbench/models"
)

// PendingReasonPrefix starts the reason of a workbench whose Pod
// Kubernetes has not placed yet (runtime.StatePending): the portal's own
// queue let it start, and the cluster's scheduler is holding it
// (docs/kubernetes.md). The rest is the scheduler's message.
const PendingReasonPrefix = "queued by Kubernetes: "

// notePending shows the scheduler's reason (or the node's: an image that
// cannot be pulled) on a starting workbench's page, once per change.
func (m *Manager) notePending(ctx context.Context, id, why string) {
	why = strings.TrimSpace(why)
	if why == "" || why == ":" {
		return // not placed yet, no word from the scheduler: a moment
	}
	reason := reasonf("queued by Kubernetes: %s", why) // PendingReasonPrefix + why
	wb, err := m.store.WorkbenchByID(ctx, id)
	if err != nil || wb.Reason == reason {
		return
	}
	_ = m.transition(ctx, id, models.Transition{From: []string{models.StateStarting}, To: models.StateStarting, Progress: wb.Progress, Reason: reason})
}
