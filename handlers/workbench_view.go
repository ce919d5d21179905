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

// workbenchJSON is the API shape of a workbench (SPEC §8).
type workbenchJSON struct {
	ID                 string   `json:"id"`
	Name               string   `json:"name"`
	Owner              string   `json:"owner"`
	State              string   `json:"state"`
	Progress           int      `json:"progress"`
	Image              string   `json:"image"`
	Flavor             string   `json:"flavor"`
	GPUs               []string `json:"gpus"`
	Simulated          bool     `json:"simulated"`
	URL                string   `json:"url"`
	Reason             string   `json:"reason"`
	StopError          string   `json:"stop_error,omitempty"`
	ReasonDetails      string   `json:"reason_details,omitempty"` // the raw error behind reason
	IdleTimeoutSeconds int64    `json:"idle_timeout_seconds"`
	CostSoFarMicros    int64    `json:"cost_so_far_micros"`
	RatePerHourMicros  int64    `json:"rate_per_hour_micros"`
	Currency           string   `json:"currency"`
	CreatedAt          string   `json:"created_at"`
	StartedAt          *string  `json:"started_at"`
	StoppedAt          *string  `json:"stopped_at"`
	// The queue (docs/scheduling.md): position among requests for the
	// same GPUs (0 when not queued), an estimate (null when unknown) and
	// why it waits.
	QueuePosition  int     `json:"queue_position"`
	EstimatedStart *string `json:"estimated_start"`
	QueueReason    string  `json:"queue_reason,omitempty"`
	Priority       string  `json:"priority"`
	Preemptible    bool    `json:"preemptible"`
	AutoResume     bool    `json:"auto_resume"`
	// PreemptAt is when a preemptible run told to yield will be stopped.
	PreemptAt *string `json:"preempt_at,omitempty"`
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
	j.Priority, j.Preemptible, j.AutoResume = wb.Priority, wb.Preemptible, wb.AutoResume
	if wb.State == models.StateQueued {
		j.QueuePosition, j.QueueReason = wb.QueuePosition, wb.QueueReason
		if wb.EstimatedStart != nil {
			s := wb.EstimatedStart.UTC().Format(timeJSON)
			j.EstimatedStart = &s
		}
	}
	if wb.PreemptAt != nil {
		s := wb.PreemptAt.UTC().Format(timeJSON)
		j.PreemptAt = &s
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
	r := templates.WorkbenchRow{Cost: pricing.Format(cost.SoFarMicros), Rate: rateText(cost.PerHourMicros, h.cfg.Currency), Currency: h.cfg.Currency, ID: wb.ID, Name: wb.Name, Owner: n.users[wb.OwnerID], State: wb.State, Progress: wb.Progress,
		Reason: wb.Reason, StopError: wb.StopError, Image: n.images[wb.ImageID], Flavor: n.flavors[wb.FlavorID], GPUs: wb.GPUs,
		Simulated: h.pool.Simulated(), URL: openURL(wb.ID, n.openPaths[wb.ImageID]), OpenLabel: openLabel(n.openPaths[wb.ImageID]), IdleMinutes: wb.IdleTimeoutS / 60,
		Started: templates.When(wb.StartedAt), Priority: wb.Priority, Preemptible: wb.Preemptible}
	if wb.State == models.StateQueued {
		r.QueuePosition, r.QueueReason, r.EstimatedStart = wb.QueuePosition, wb.QueueReason, "unknown (what runs now has no maximum runtime)"
		if wb.EstimatedStart != nil {
			r.EstimatedStart = templates.When(wb.EstimatedStart)
		}
	}
	if wb.PreemptAt != nil && wb.Active() {
		r.PreemptAt = templates.When(wb.PreemptAt)
	}
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
	return pricing.Format(micros) + " " + currency + "/h"
}
