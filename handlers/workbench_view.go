package handlers

import (
	"context"
	"net/http"
	"strings"

	"github.com/gin-gonic/gin"

	"workbench/models"
	"workbench/models/pricing"
	"workbench/orchestrator"
	"workbench/templates"
)

// catalogNames maps image, flavor and user ids to names for display.
type catalogNames struct {
	images     map[int64]string
	openPaths  map[int64]string // image id → open_path
	flavors    map[int64]string
	flavorByID map[int64]*models.Flavor
	users      map[int64]string
}

func (h *Handler) names(ctx context.Context) (catalogNames, error) {
	n := catalogNames{images: map[int64]string{}, openPaths: map[int64]string{}, flavors: map[int64]string{}, flavorByID: map[int64]*models.Flavor{}, users: map[int64]string{}}
	imgs, err := h.store.ListImages(ctx, false)
	if err != nil {
		return n, err
	}
	for _, i := range imgs {
		n.images[i.ID] = i.Name
		n.openPaths[i.ID] = i.OpenPath
	}
	fls, err := h.store.ListFlavors(ctx, false)
	if err != nil {
		return n, err
	}
	for i, f := range fls {
		n.flavors[f.ID] = f.Name
		n.flavorByID[f.ID] = &fls[i]
	}
	users, err := h.store.ListUsers(ctx)
	if err != nil {
		return n, err
	}
	for _, u := range users {
		n.users[u.ID] = u.Username
	}
	return n, nil
}

// workbenchViews loads what the pages and the API show beside workbenches:
// catalog names and costs.
func (h *Handler) workbenchViews(ctx context.Context, wbs []models.Workbench) (catalogNames, map[string]orchestrator.WorkbenchCost, error) {
	n, err := h.names(ctx)
	if err != nil {
		return n, nil, err
	}
	costs, err := h.wbs.Billing().Costs(ctx, wbs, n.flavorByID)
	return n, costs, err
}

func (h *Handler) workbenchJSON(wb *models.Workbench, n catalogNames, cost orchestrator.WorkbenchCost) workbenchJSON {
	j := workbenchJSON{ID: wb.ID, Name: wb.Name, Owner: n.users[wb.OwnerID], State: wb.State, Progress: wb.Progress,
		Image: n.images[wb.ImageID], Flavor: n.flavors[wb.FlavorID], GPUs: nonNil(wb.GPUs), Simulated: h.pool.Simulated() && len(wb.GPUs) > 0,
		URL: h.cfg.PublicURL + openURL(wb.ID, n.openPaths[wb.ImageID]), Reason: wb.Reason, StopError: wb.StopError, ReasonDetails: wb.ReasonDetails, IdleTimeoutSeconds: wb.IdleTimeoutS, CreatedAt: wb.CreatedAt.Format(timeJSON),
		CostSoFarMicros: cost.SoFarMicros, RatePerHourMicros: cost.PerHourMicros, Currency: h.cfg.Currency}
	if wb.StartedAt != nil {
		s := wb.StartedAt.Format(timeJSON)
		j.StartedAt = &s
	}
	if wb.StoppedAt != nil {
		s := wb.StoppedAt.Format(timeJSON)
		j.StoppedAt = &s
	}
	return j
}

const timeJSON = "2006-01-02T15:04:05Z07:00"

// openURL is where a workbench's Open button goes: /wb/{id}{open_path}.
func openURL(id, openPath string) string {
	if openPath == "" {
		openPath = models.DefaultOpenPath
	}
	return strings.TrimSuffix(orchestrator.BaseURL(id), "/") + openPath
}

// openLabel names the Open button after the tool it opens.
func openLabel(openPath string) string {
	if tool := models.ToolName(openPath); tool != "" {
		return "Open " + tool
	}
	return "Open"
}

func (h *Handler) workbenchRow(wb *models.Workbench, n catalogNames, cost orchestrator.WorkbenchCost) templates.WorkbenchRow {
	r := templates.WorkbenchRow{Cost: pricing.Micros(cost.SoFarMicros).Decimal(h.cfg.Currency), Rate: rateText(cost.PerHourMicros, h.cfg.Currency), Currency: h.cfg.Currency, ID: wb.ID, Name: wb.Name, Owner: n.users[wb.OwnerID], State: wb.State, Progress: wb.Progress,
		Reason: wb.Reason, StopError: wb.StopError, Image: n.images[wb.ImageID], Flavor: n.flavors[wb.FlavorID], GPUs: wb.GPUs,
		Simulated: h.pool.Simulated(), URL: openURL(wb.ID, n.openPaths[wb.ImageID]), OpenLabel: openLabel(n.openPaths[wb.ImageID]), IdleMinutes: wb.IdleTimeoutS / 60,
		Started: templates.When(wb.StartedAt)}
	return r
}

// ownedWorkbench loads the :id workbench of the current user. Anyone else's
// (admins included) is a 404, so ids cannot be probed.
func (h *Handler) ownedWorkbench(c *gin.Context) (*models.Workbench, bool) {
	wb, err := h.store.WorkbenchByID(c.Request.Context(), c.Param("id"))
	if err != nil || wb.OwnerID != currentUser(c).ID {
		h.fail(c, errNotFound)
		return nil, false
	}
	return wb, true
}

func (h *Handler) listRows(ctx context.Context, ownerID int64) ([]templates.WorkbenchRow, error) {
	wbs, err := h.store.ListWorkbenches(ctx, ownerID)
	if err != nil {
		return nil, err
	}
	n, costs, err := h.workbenchViews(ctx, wbs)
	if err != nil {
		return nil, err
	}
	rows := make([]templates.WorkbenchRow, 0, len(wbs))
	for i := range wbs {
		r := h.workbenchRow(&wbs[i], n, costs[wbs[i].ID])
		r.Deadline = h.deadlineView(ctx, &wbs[i])
		rows = append(rows, r)
	}
	return rows, nil
}

func (h *Handler) adminWorkbenches(c *gin.Context) {
	rows, err := h.listRows(c.Request.Context(), 0)
	if err != nil {
		h.fail(c, err)
		return
	}
	h.render(c, http.StatusOK, templates.AdminWorkbenchesPage(h.page(c, "All workbenches"), rows))
}

// rateText is "3.25 USD/h" for a running workbench, "" otherwise.
func rateText(micros int64, currency string) string {
	if micros == 0 {
		return ""
	}
	return pricing.Micros(micros).Format(currency) + "/h"
}
