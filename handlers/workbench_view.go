package handlers

import (
	"context"
	"errors"
	"net/http"
	"slices"
	"strconv"
	"strings"

	"github.com/gin-gonic/gin"

	"workbench/models"
	"workbench/models/pricing"
	"workbench/orchestrator"
	"workbench/orchestrator/runtime"
	"workbench/templates"
	"workbench/templates/i18n"
)

// catalogNames maps image, flavor and user ids to names for display. The
// catalog comes from the store's cache; users are only the owners of the
// workbenches shown.
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
	return n, nil
}

// ownerNames fills n.users for the workbenches that came without their
// owner's name (those read one by one rather than listed): only those
// owners are read, never every user.
func (h *Handler) ownerNames(ctx context.Context, n catalogNames, wbs []models.Workbench) error {
	for i := range wbs {
		wb := &wbs[i]
		if wb.OwnerName != "" {
			n.users[wb.OwnerID] = wb.OwnerName
			continue
		}
		if _, done := n.users[wb.OwnerID]; done {
			continue
		}
		u, err := h.store.UserByID(ctx, wb.OwnerID)
		if err != nil {
			return err
		}
		n.users[wb.OwnerID] = u.Username
	}
	return nil
}

// workbenchViews loads what the pages and the API show beside workbenches:
// catalog names and costs.
func (h *Handler) workbenchViews(ctx context.Context, wbs []models.Workbench) (catalogNames, map[string]orchestrator.WorkbenchCost, error) {
	n, err := h.names(ctx)
	if err != nil {
		return n, nil, err
	}
	if err := h.ownerNames(ctx, n, wbs); err != nil {
		return n, nil, err
	}
	costs, err := h.wbs.Billing().Costs(ctx, wbs, n.flavorByID)
	return n, costs, err
}

// workbenchJSON is wb as the API answers it. Simulated is the pool's: on a
// simulated pool every workbench lives in the simulation, whatever its
// state (it was true only while it held GPUs, so a stopped or queued one
// read false, as if it had run on real GPUs).
func (h *Handler) workbenchJSON(wb *models.Workbench, n catalogNames, cost orchestrator.WorkbenchCost) workbenchJSON {
	wb, unrecorded := h.shownWorkbench(wb)
	j := workbenchJSON{ID: wb.ID, Name: wb.Name, Owner: n.users[wb.OwnerID], State: wb.State, Progress: wb.Progress,
		Image: n.images[wb.ImageID], Flavor: n.flavors[wb.FlavorID], GPUs: nonNil(wb.GPUs), Simulated: h.pool.Simulated(),
		URL: h.cfg.PublicURL + openURL(wb.ID, n.openPaths[wb.ImageID]), Reason: wb.Reason, StopError: wb.StopError, ReasonDetails: wb.ReasonDetails, IdleTimeoutSeconds: wb.IdleTimeoutS, CreatedAt: wb.CreatedAt.Format(timeJSON),
		CostSoFarMicros: cost.SoFarMicros, RatePerHourMicros: cost.PerHourMicros, Currency: h.cfg.Currency,
		Units: wb.Units, Shared: wbShared(wb, n),
		CPUOnly: wb.CPUOnly(), RunFlavor: n.flavors[wb.ShapeFlavorID()], ExtraPorts: nonNil(wb.ExtraPorts)}
	j.StopNotRecorded = unrecorded
	if j.Units == nil {
		j.Units = []models.Unit{}
	}
	if j.Shared {
		j.SharedNote = sharedLabel
	}
	if wb.StartedAt != nil {
		s := wb.StartedAt.Format(timeJSON)
		j.StartedAt = &s
	}
	if wb.StoppedAt != nil {
		s := wb.StoppedAt.Format(timeJSON)
		j.StoppedAt = &s
	}
	j.Priority, j.Preemptible, j.AutoResume = wb.Priority, wb.Preemptible, wb.AutoResume
	j.WaitingFor = orchestrator.WaitingFor(wb.State, wb.Reason)
	if wb.State == models.StateQueued {
		j.QueuePosition, j.QueueReason = wb.QueuePosition, wb.QueueReason
		if wb.EstimatedStart != nil {
			s := wb.EstimatedStart.UTC().Format(timeJSON)
			j.EstimatedStart = &s
		}
		j.EstimatedStartReason, j.EstimatedStartReasonCode = orchestrator.EstimateUnknownText(wb), orchestrator.EstimateUnknownCode(wb)
	}
	if wb.PreemptAt != nil {
		s := wb.PreemptAt.UTC().Format(timeJSON)
		j.PreemptAt = &s
		j.PreemptFor = wb.PreemptFor // set and cleared with PreemptAt
	}
	// The column outlives the preemption on a stop (it is cleared only by
	// a new run or request), so the state says whether it is current.
	if wb.State == models.StatePreempted || wb.State == models.StateQueued {
		j.PreemptedFor = wb.PreemptedFor
	}
	if wb.PausedAt != nil && wb.State == models.StateRunning {
		s := wb.PausedAt.UTC().Format(timeJSON)
		j.PausedAt = &s
	}
	j.Reservation = wb.ReservationID
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
func openLabel(ctx context.Context, openPath string) string {
	if tool := models.ToolName(openPath); tool != "" {
		return i18n.T(ctx, "Open %s", tool)
	}
	return i18n.T(ctx, "Open")
}

func (h *Handler) workbenchRow(ctx context.Context, wb *models.Workbench, n catalogNames, cost orchestrator.WorkbenchCost) templates.WorkbenchRow {
	wb, unrecorded := h.shownWorkbench(wb)
	r := templates.WorkbenchRow{Cost: pricing.Micros(cost.SoFarMicros).Decimal(h.cfg.Currency), Rate: rateText(cost.PerHourMicros, h.cfg.Currency), CostMicros: cost.SoFarMicros, RateMicros: cost.PerHourMicros, Currency: h.cfg.Currency, ID: wb.ID, Name: wb.Name, Owner: n.users[wb.OwnerID], State: wb.State, Progress: wb.Progress,
		Reason: wb.Reason, StopError: wb.StopError, Image: n.images[wb.ImageID], Flavor: n.flavors[wb.FlavorID], GPUs: wb.GPUs,
		Simulated: h.pool.Simulated(), URL: openURL(wb.ID, n.openPaths[wb.ImageID]), OpenLabel: openLabel(ctx, n.openPaths[wb.ImageID]), IdleMinutes: wb.IdleTimeoutS / 60,
		Started: templates.WhenIn(ctx, wb.StartedAt), Shared: wbShared(wb, n), SharedLabel: i18n.T(ctx, sharedLabel),
		CPUOnly: wb.CPUOnly(), RunFlavor: n.flavors[wb.ShapeFlavorID()], Priority: wb.Priority, Preemptible: wb.Preemptible,
		WaitingFor: orchestrator.WaitingFor(wb.State, wb.Reason), Paused: wb.PausedAt != nil && wb.State == models.StateRunning}
	if unrecorded && wb.StoppedAt != nil {
		r.StopNotRecorded, r.Stopped = true, templates.WhenIn(ctx, wb.StoppedAt)
	}
	if wb.State == models.StateQueued {
		// No estimate: what it waits for has no known end — runs without
		// a maximum runtime, but also drained GPUs, the owner's own
		// workbenches under a limit, or GPUs nothing frees (it read "what
		// runs now has no maximum runtime" while nothing ran).
		r.QueuePosition, r.QueueReason, r.EstimatedStart = wb.QueuePosition, wb.QueueReason, i18n.T(ctx, "unknown (nothing it waits for has a known end time)")
		if why := orchestrator.EstimateUnknownText(wb); why != "" {
			// Why, where the queue knows: a researcher could not plan
			// around a bare "unknown".
			r.EstimatedStart = i18n.T(ctx, "unknown — %s", i18n.Reason(ctx, why))
		}
		if wb.EstimatedStart != nil {
			r.EstimatedStart = templates.WhenIn(ctx, wb.EstimatedStart)
		}
	}
	if wb.PreemptAt != nil && wb.Active() {
		r.PreemptAt = templates.WhenIn(ctx, wb.PreemptAt)
	}
	for _, u := range wb.Units {
		r.Units = append(r.Units, unitRow(ctx, u))
	}
	if fl := n.flavorByID[wb.FlavorID]; fl != nil && fl.GPUCount > 0 {
		if twin := n.flavorByID[fl.CPUTwinID]; twin != nil && twin.Enabled && twin.GPUCount == 0 {
			r.CPUTwin = twin.Name
		}
	}
	return r
}

// shownWorkbench is wb as its pages and the API show it: for a stop
// carried out that the database could not record yet (its disk full or
// read-only; orchestrator.UnrecordedStop), stopped at the container's
// exit with the stop's reason, holding nothing, and unrecorded true. The
// record still says running until reconciliation records the stop; the
// page said "running" meanwhile, with Open and Stop buttons, for a
// workbench that was not.
func (h *Handler) shownWorkbench(wb *models.Workbench) (*models.Workbench, bool) {
	u, ok := h.wbs.UnrecordedStop(wb.ID)
	if !ok {
		return wb, false
	}
	if !wb.Active() {
		return wb, wb.State == models.StateStopped // already shown so (or recorded a moment ago)
	}
	shown := *wb
	at := u.At
	shown.State, shown.Progress, shown.Reason, shown.StopError = models.StateStopped, 0, u.Reason, ""
	shown.StoppedAt, shown.PausedAt, shown.PreemptAt = &at, nil, nil
	shown.GPUs, shown.Units, shown.Endpoint = nil, nil, ""
	return &shown, true
}

// wbShared: the workbench runs (or will run, once started) on a slice of a
// shared GPU — from its bound units, else from its flavor.
func wbShared(wb *models.Workbench, n catalogNames) bool {
	if wb.Shared {
		return true
	}
	f := n.flavorByID[wb.FlavorID]
	return f != nil && f.Shared()
}

// unitRow is one held unit as the workbench page lists it.
func unitRow(ctx context.Context, u models.Unit) templates.UnitRow {
	r := templates.UnitRow{Kind: u.Kind, UUID: u.UUID}
	switch u.Kind {
	case models.UnitMIG:
		r.Label = "MIG " + u.Profile
	case models.UnitSlice:
		r.Label = i18n.T(ctx, "slice %s of a shared GPU", strconv.Itoa(*u.Slice))
	default:
		r.Label = i18n.T(ctx, "whole GPU")
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

// workbenchForPage loads the :id workbench for its page (GET
// /workbenches/:id): its owner's, or for an administrator anyone's, then
// with others true, and the page is the administrator's view of it
// (admin_workbench_page.go: no notebook, token or SSH command, only the
// admin console's Stop). Only that page reads a workbench this way: every
// other workbench route keeps ownedWorkbench, so its notebook, tokens and
// actions stay its owner's. A non-admin gets the 404 ownedWorkbench gives.
func (h *Handler) workbenchForPage(c *gin.Context) (wb *models.Workbench, others bool, ok bool) {
	if u := currentUser(c); !u.IsAdmin() {
		wb, ok = h.ownedWorkbench(c)
		return wb, false, ok
	}
	wb, err := h.store.WorkbenchByID(c.Request.Context(), c.Param("id"))
	if err != nil {
		h.fail(c, errNotFound)
		return nil, false, false
	}
	return wb, wb.OwnerID != currentUser(c).ID, true
}

func (h *Handler) listRows(ctx context.Context, ownerID int64) ([]templates.WorkbenchRow, error) {
	wbs, err := h.store.ListWorkbenches(ctx, ownerID)
	if err != nil {
		return nil, err
	}
	return h.rowsOf(ctx, wbs, ownerID)
}

// rowsOf words wbs for a list read by the user viewerID (an admin's list
// holds others' workbenches).
func (h *Handler) rowsOf(ctx context.Context, wbs []models.Workbench, viewerID int64) ([]templates.WorkbenchRow, error) {
	n, costs, err := h.workbenchViews(ctx, wbs)
	if err != nil {
		return nil, err
	}
	rows := make([]templates.WorkbenchRow, 0, len(wbs))
	for i := range wbs {
		r := h.workbenchRow(ctx, &wbs[i], n, costs[wbs[i].ID])
		r.Deadline = h.deadlineView(ctx, &wbs[i], othersName(&wbs[i], viewerID, r.Owner))
		rows = append(rows, r)
	}
	return rows, nil
}

// othersName is the owner's name when the reader is someone else (an
// admin), "" when it is the owner's own workbench.
func othersName(wb *models.Workbench, viewerID int64, owner string) string {
	if wb.OwnerID == viewerID {
		return ""
	}
	return owner
}

// adminWorkbenches: GET /admin/workbenches?state=&q=&group=&page= —
// everyone's workbenches, 100 a page, optionally in one state, of one
// group's members and only those whose name or owner contains q (a class
// of 30 has 30 "project" workbenches).
func (h *Handler) adminWorkbenches(c *gin.Context) {
	ctx := c.Request.Context()
	state := c.Query("state")
	if state != "" && !slices.Contains(models.AllStates, state) {
		h.fail(c, &models.ValidationError{Field: "state", Message: "is not a workbench state"})
		return
	}
	groups, err := h.store.GroupNames(ctx)
	if err != nil {
		h.fail(c, err)
		return
	}
	v := templates.AdminWorkbenchesView{State: state, Search: c.Query("q"), States: models.AllStates,
		Group: strings.TrimSpace(c.Query("group")), Groups: groups}
	f := models.WorkbenchFilter{State: state, Search: v.Search}
	if v.Group != "" {
		g, err := h.store.GroupByName(ctx, v.Group)
		if errors.Is(err, models.ErrNotFound) {
			// Said, not ignored: everyone's workbenches under a
			// misspelt class read as the class's. The filter stays
			// as typed, to correct it.
			v.UnknownGroup = true
			h.render(c, http.StatusNotFound, templates.AdminWorkbenchesPage(h.page(c, i18n.T(ctx, "All workbenches")), v))
			return
		}
		if err != nil {
			h.fail(c, err)
			return
		}
		f.GroupID = g.ID
	}
	wbs, pages, err := pageOf(c, "/admin/workbenches", func(offset, limit int) ([]models.Workbench, int64, error) {
		return h.store.WorkbenchPage(ctx, f, offset, limit)
	})
	if err != nil {
		h.fail(c, err)
		return
	}
	rows, err := h.rowsOf(ctx, wbs, currentUser(c).ID)
	if err != nil {
		h.fail(c, err)
		return
	}
	me := currentUser(c).ID
	for i := range rows {
		rows[i].Mine = wbs[i].OwnerID == me
		// The row says why a workbench failed; a user's failed pull
		// told them to ask an admin, the admin reading it here is told
		// what to do.
		if rows[i].State == models.StateFailed {
			rows[i].Reason = runtime.AdminWording(rows[i].Reason)
		}
	}
	v.Rows, v.Pages = rows, pages
	v.StopAll = stopAllOffered(v)
	h.render(c, http.StatusOK, templates.AdminWorkbenchesPage(h.page(c, i18n.T(c.Request.Context(), "All workbenches")), v))
}

// rateTextIn is rateText in the reader's locale ("¥3.25/小时").
func rateTextIn(ctx context.Context, micros int64, currency string) string {
	if micros == 0 {
		return ""
	}
	return templates.MoneyPerHour(ctx, micros, currency)
}

// rateText is "3.25 USD/h" for a running workbench, "" otherwise.
func rateText(micros int64, currency string) string {
	if micros == 0 {
		return ""
	}
	return pricing.Micros(micros).Format(currency) + "/h"
}
