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

// Who holds a workbench that waits (the JSON workbench's "waiting_for",
// docs/kubernetes.md): the portal's own queue, or Kubernetes' scheduler.
const (
	WaitingForPortal     = "portal"
	WaitingForKubernetes = "kubernetes"
)

// WaitingFor says who a workbench in state with reason waits for: the
// portal's queue (queued), the cluster's scheduler (starting, its Pod
// Pending: its units are bound, so the portal's queue must not place it
// again, but people see it as queued), or no one ("").
func WaitingFor(state, reason string) string {
	switch {
	case state == models.StateQueued:
		return WaitingForPortal
	case state == models.StateStarting && strings.HasPrefix(reason, PendingReasonPrefix):
		return WaitingForKubernetes
	}
	return ""
}
