package handlers

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net/http"

	"github.com/gin-gonic/gin"

	"workbench/models"
	"workbench/templates"
)

// workbenchPage shows one workbench: state, progress, log tail, history.
// An administrator opening someone else's gets the administrator's view.
func (h *Handler) workbenchPage(c *gin.Context) {
	wb, others, ok := h.workbenchForPage(c)
	if !ok {
		return
	}
	if others {
		h.adminWorkbenchPage(c, wb)
		return
	}
	h.showWorkbench(c, wb, http.StatusOK, templates.WorkbenchTokensView{})
}

// showWorkbench renders a workbench's page; tv carries what the token form
// needs to show again (a new secret, or the name and error of a refusal).
func (h *Handler) showWorkbench(c *gin.Context, wb *models.Workbench, status int, tv templates.WorkbenchTokensView) {
	ctx := c.Request.Context()
	// Stopped for everything below (deadlines, idle banners, logs) when
	// its stop is only not recorded yet.
	wb, _ = h.shownWorkbench(wb)
	n, costs, err := h.workbenchViews(ctx, []models.Workbench{*wb})
	if err != nil {
		h.fail(c, err)
		return
	}
	hist, err := h.store.WorkbenchHistory(ctx, wb.ID)
	if err != nil {
		h.fail(c, err)
		return
	}
	v := templates.WorkbenchView{WB: h.workbenchRow(ctx, wb, n, costs[wb.ID]), ExitLogs: wb.ExitLogs, ReasonDetails: wb.ReasonDetails,
		NoReload: c.Query("reload") == "off"}
	v.WB.Deadline = h.deadlineView(ctx, wb, othersName(wb, currentUser(c).ID, v.WB.Owner))
	v.GPUIdle = h.gpuIdleView(ctx, wb)
	v.GPUTelemetry, v.GPUEnergy = h.workbenchGPUFacts(ctx, wb, &v.WB)
	if v.HomeSharedWith, err = h.homeSharedWith(ctx, wb); err != nil {
		h.fail(c, err)
		return
	}
	h.workbenchAccess(c, wb, &v)
	if v.FreeInstead, err = h.freeInstead(ctx, currentUser(c), wb, v.WB.Image); err != nil {
		h.fail(c, err)
		return
	}
	if v.StorageOver, err = h.storageOverNotice(ctx, wb); err != nil {
		h.fail(c, err)
		return
	}
	if v.Tokens, err = h.workbenchTokensView(c, wb, tv); err != nil {
		h.fail(c, err)
		return
	}
	for _, e := range hist {
		v.History = append(v.History, templates.HistoryRow{At: templates.WhenIn(ctx, &e.At), State: e.State, Message: e.Message})
	}
	// Its owner learns which administrators read it, and when
	// (adminWorkbenchPage records each look); no one else does.
	if wb.OwnerID == currentUser(c).ID {
		looks, earlier, err := h.adminViews(ctx, wb)
		if err != nil {
			h.fail(c, err)
			return
		}
		v.AdminViewed = adminViewedNote(ctx, looks, earlier)
	}
	if rc, err := h.wbs.ContainerLogs(ctx, wb.ID, 50); err == nil {
		b, _ := io.ReadAll(io.LimitReader(rc, 64<<10))
		rc.Close()
		v.Logs = string(b)
	}
	p := h.page(c, wb.Name)
	// The storage notice says it in this workbench's terms: the banner
	// leaves it out rather than say it twice.
	p.Budget = h.budgetWarningOf(c.Request, currentUser(c), v.StorageOver == nil)
	h.render(c, status, templates.WorkbenchPage(p, v))
}

// storageOverNotice is the workbench page's note when its owner's home
// holds more than their storage limit, as last metered; nil otherwise.
func (h *Handler) storageOverNotice(ctx context.Context, wb *models.Workbench) (*templates.StorageOverNotice, error) {
	lim, err := h.store.EffectiveQuota(ctx, wb.OwnerID)
	if err != nil || lim.MaxStorageGiB == nil {
		return nil, err
	}
	used, err := h.store.StorageUsedMilliGiB(ctx, wb.OwnerID)
	if err != nil || !models.StorageOver(lim, used) {
		return nil, err
	}
	return &templates.StorageOverNotice{UsedMilliGiB: used, LimitGiB: *lim.MaxStorageGiB, Used: models.GiBText(used),
		Over: models.GiBText(used - *lim.MaxStorageGiB*1000), Running: wb.State == models.StateRunning}, nil
}

// gpuNames names the GPUs wb holds as people read them, by UUID (nil when
// it holds none; a GPU the inventory cannot name is shown by its UUID).
func (h *Handler) gpuNames(ctx context.Context, wb *models.Workbench) map[string]string {
	if len(wb.GPUs) == 0 && len(wb.Units) == 0 {
		return nil
	}
	names, err := h.pool.GPUNames(ctx)
	if err != nil {
		h.log.Warn("workbench page: GPU names", "workbench", wb.ID, "err", err)
	}
	return names
}

// apiWorkbench: GET /api/v1/workbenches/{id}: the owner's, or for an
// admin anyone's (they list everyone's with ?all=true and stop any with
// the admin API; reading one by its id answered 404). Everything else on
// a workbench stays its owner's.
func (h *Handler) apiWorkbench(c *gin.Context) {
	if u := currentUser(c); u.IsAdmin() {
		wb, err := h.store.WorkbenchByID(c.Request.Context(), c.Param("id"))
		if err != nil {
			h.fail(c, errNotFound)
			return
		}
		if wb.OwnerID == u.ID {
			h.writeOwnWorkbench(c, wb)
			return
		}
		h.writeWorkbench(c, http.StatusOK, wb)
		return
	}
	wb, ok := h.ownedWorkbench(c)
	if !ok {
		return
	}
	h.writeOwnWorkbench(c, wb)
}

// apiWorkbenches: GET /api/v1/workbenches (admins: ?all=true for
// everyone's; with &group=NAME one group's members'), newest first, a
// page at a time (?limit=&cursor=,
// api_paging.go).
func (h *Handler) apiWorkbenches(c *gin.Context) {
	ctx := c.Request.Context()
	owner := currentUser(c).ID
	all, ok := h.queryBool(c, "all")
	if !ok {
		return
	}
	limit, after, ok := h.apiPageParams(c, "workbenches")
	if !ok {
		return
	}
	key, err := workbenchCursor(after)
	if err != nil {
		h.fail(c, err)
		return
	}
	if all {
		if !currentUser(c).IsAdmin() {
			h.fail(c, errForbidden)
			return
		}
		owner = 0
	}
	var groupID int64
	if name := c.Query("group"); name != "" {
		// One group's members' workbenches: a class's, for an admin.
		if !all {
			h.fail(c, newError(http.StatusBadRequest, "invalid_group", "group: filters everyone's workbenches; add all=true"))
			return
		}
		g, err := h.store.GroupByName(ctx, name)
		if errors.Is(err, models.ErrNotFound) {
			err = &models.ValidationError{Field: "group", Code: "unknown_group", Message: fmt.Sprintf("there is no group %q", name)}
		}
		if err != nil {
			h.fail(c, err)
			return
		}
		groupID = g.ID
	}
	wbs, err := h.store.WorkbenchesAfter(ctx, owner, groupID, key, limit+1)
	if err != nil {
		h.fail(c, err)
		return
	}
	// Names and live cost for the page's workbenches only.
	n, costs, err := h.workbenchViews(ctx, wbs[:min(len(wbs), limit)])
	if err != nil {
		h.fail(c, err)
		return
	}
	writeAPIPage(c, "workbenches", wbs, limit, workbenchCursorOf, func(wb *models.Workbench) workbenchJSON {
		return h.workbenchJSON(wb, n, costs[wb.ID])
	})
}

// workbenchLogs: GET /api/v1/workbenches/{id}/logs?tail=N&follow=true, text.
func (h *Handler) workbenchLogs(c *gin.Context) {
	wb, ok := h.ownedWorkbench(c)
	if !ok {
		return
	}
	tail, err := atoiField("tail", c.Query("tail"), 200)
	if err != nil || tail < 1 || tail > 10000 {
		h.fail(c, newError(http.StatusBadRequest, "invalid_tail", "tail: a whole number of lines from 1 to 10000"))
		return
	}
	follow, ok := h.queryBool(c, "follow")
	if !ok {
		return
	}
	if follow {
		defer h.trackStream(c)()
	}
	rc, err := h.wbs.Logs(c.Request.Context(), wb.ID, tail, follow)
	if err != nil {
		h.fail(c, err)
		return
	}
	defer rc.Close()
	c.Header("Content-Type", "text/plain; charset=utf-8")
	c.Header("X-Accel-Buffering", "no")
	c.Status(http.StatusOK)
	buf := make([]byte, 8<<10)
	for {
		n, err := rc.Read(buf)
		if n > 0 {
			if _, werr := c.Writer.Write(buf[:n]); werr != nil {
				return
			}
			c.Writer.Flush()
		}
		if err != nil {
			return
		}
	}
}

// writeWorkbench answers with one workbench's JSON.
func (h *Handler) writeWorkbench(c *gin.Context, status int, wb *models.Workbench) {
	n, costs, err := h.workbenchViews(c.Request.Context(), []models.Workbench{*wb})
	if err != nil {
		h.fail(c, err)
		return
	}
	c.JSON(status, h.workbenchJSON(wb, n, costs[wb.ID]))
}

// writeOwnWorkbench answers the owner's GET of wb: its JSON with the
// administrators' recent looks at it (admin_views, admin_views_earlier),
// which are its owner's to read, as on its page.
func (h *Handler) writeOwnWorkbench(c *gin.Context, wb *models.Workbench) {
	ctx := c.Request.Context()
	// Stopped for everything below (deadlines, idle banners, logs) when
	// its stop is only not recorded yet.
	wb, _ = h.shownWorkbench(wb)
	n, costs, err := h.workbenchViews(ctx, []models.Workbench{*wb})
	if err != nil {
		h.fail(c, err)
		return
	}
	looks, earlier, err := h.adminViews(ctx, wb)
	if err != nil {
		h.fail(c, err)
		return
	}
	j := h.workbenchJSON(wb, n, costs[wb.ID])
	views := apiAdminViews(looks)
	j.AdminViews, j.AdminViewsEarlier = &views, &earlier
	c.JSON(http.StatusOK, j)
}

// homeSharedWith names the owner's other workbenches, which share wb's home
// volume (one per user).
func (h *Handler) homeSharedWith(ctx context.Context, wb *models.Workbench) ([]string, error) {
	all, err := h.store.ListWorkbenches(ctx, wb.OwnerID)
	if err != nil {
		return nil, err
	}
	var out []string
	for _, o := range all {
		if o.ID != wb.ID {
			out = append(out, o.Name)
		}
	}
	return out, nil
}
