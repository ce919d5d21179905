package handlers

import (
	"context"
	"time"

	"workbench/models"
	"workbench/templates"
)

// Its owner learns which administrators read a workbench (its page's
// log, history and cost: adminWorkbenchPage records each look, one row
// per administrator and models.ViewAuditEvery) from the recent looks:
// the newest adminViewsShown in the last adminViewsDays, and how many
// earlier ones in that window are not listed. Only the last look hid a
// second administrator's, or the same one's an hour before.
const (
	adminViewsShown = 5
	adminViewsDays  = 90
)

// adminViews are the recent administrators' looks at wb, for its owner
// alone (the caller checks): one indexed statement (models.AuditsOn).
func (h *Handler) adminViews(ctx context.Context, wb *models.Workbench) ([]models.AuditEntry, int64, error) {
	rows, total, err := h.store.AuditsOn(ctx, models.ActionViewAsAdmin, wb.ID, h.store.Now().AddDate(0, 0, -adminViewsDays), adminViewsShown)
	if err != nil {
		return nil, 0, err
	}
	return rows, total - int64(len(rows)), nil
}

// adminViewedNote words the looks for the owner's page, the times in the
// reader's zone and language.
func adminViewedNote(ctx context.Context, rows []models.AuditEntry, earlier int64) templates.AdminViewedNote {
	v := templates.AdminViewedNote{Days: adminViewsDays, Earlier: earlier}
	for _, e := range rows {
		v.Looks = append(v.Looks, templates.AdminLook{By: e.Actor, At: templates.WhenIn(ctx, &e.At)})
	}
	return v
}

// APIAdminView is one administrator's look at a workbench in the owner's
// GET /api/v1/workbenches/{id} (admin_views, newest first).
type APIAdminView struct {
	By string `json:"by"`
	At string `json:"at"`
}

// apiAdminViews are the looks as the API writes them (UTC, RFC 3339).
func apiAdminViews(rows []models.AuditEntry) []APIAdminView {
	out := make([]APIAdminView, 0, len(rows))
	for _, e := range rows {
		out = append(out, APIAdminView{By: e.Actor, At: e.At.UTC().Format(time.RFC3339)})
	}
	return out
}
