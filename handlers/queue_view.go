package handlers

import (
	"context"
	"sort"

	"workbench/models"
	"workbench/orchestrator"
	"workbench/templates"
	"workbench/templates/i18n"
)

// queueRows lists the queue in order of position (then arrival). Other
// users' requests are shown without their owner to people who are not
// administrators, as the GPU table does.
func (h *Handler) queueRows(ctx context.Context, viewer *models.User) ([]templates.QueueRow, error) {
	wbs, err := h.store.ListWorkbenches(ctx, 0, models.StateQueued)
	if err != nil {
		return nil, err
	}
	n, err := h.names(ctx)
	if err != nil {
		return nil, err
	}
	if err := h.ownerNames(ctx, n, wbs); err != nil {
		return nil, err
	}
	sort.SliceStable(wbs, func(i, j int) bool {
		a, b := wbs[i], wbs[j]
		if a.QueuePosition != b.QueuePosition {
			return a.QueuePosition < b.QueuePosition
		}
		return a.CreatedAt.Before(b.CreatedAt)
	})
	rows := make([]templates.QueueRow, 0, len(wbs))
	for _, wb := range wbs {
		mine := viewer.IsAdmin() || wb.OwnerID == viewer.ID
		r := templates.QueueRow{ID: wb.ID, Name: i18n.T(ctx, "another user's workbench"), Owner: "—", Flavor: n.flavors[wb.FlavorID], Priority: wb.Priority,
			Preemptible: wb.Preemptible, Position: wb.QueuePosition, Reason: wb.QueueReason, EstimatedStart: i18n.T(ctx, "unknown"),
			QueuedAt: templates.WhenIn(ctx, wb.QueuedAt), Queued: wb.QueuedAt, EstimatedAt: wb.EstimatedStart, Mine: mine}
		if mine {
			r.Name, r.Owner = wb.Name, n.users[wb.OwnerID]
		}
		switch {
		case mine && wb.OwnerID != viewer.ID: // an admin: the whole reason, less the owner's position words
			r.Reason = orchestrator.ReasonForOthers(wb.QueueReason)
		case !mine:
			r.Reason = orchestrator.ReasonForPublic(wb.QueueReason)
		}
		if r.EstimateWhy = orchestrator.EstimateUnknownText(&wb); r.EstimateWhy != "" {
			r.EstimateWhyCode = orchestrator.EstimateUnknownCode(&wb)
			r.EstimatedStart = i18n.T(ctx, "unknown — %s", i18n.Reason(ctx, r.EstimateWhy))
		}
		if wb.EstimatedStart != nil {
			r.EstimatedStart = templates.WhenIn(ctx, wb.EstimatedStart)
		}
		rows = append(rows, r)
	}
	return rows, nil
}
