package handlers

import (
	"context"
	"io"
	"net/http"
	"regexp"
	"strings"

	"github.com/gin-gonic/gin"

	"workbench/models"
	"workbench/models/pricing"
	"workbench/orchestrator/runtime"
	"workbench/templates"
	"workbench/templates/i18n"
)

// adminWorkbenchPage is GET /workbenches/:id of someone else's workbench,
// read by an administrator (workbenchForPage): what its owner's page says
// of its state, flavor, GPUs, cost, deadlines, log and history, under a
// banner naming its owner, with the admin console's Stop (and Force stop
// where a stop failed), which come back here. Nothing that enters the
// notebook is on it — no Open link, notebook token, port buttons or SSH
// command (admins do not open users' notebooks, SPEC §4) — nor any owner's
// action (Start, Delete, Save as image, +1 h, ports, tokens, home). Each
// look is audited (workbench.view_as_admin) and its owner's page lists
// the administrators' recent looks.
func (h *Handler) adminWorkbenchPage(c *gin.Context, wb *models.Workbench) {
	ctx := c.Request.Context()
	n, costs, err := h.workbenchViews(ctx, []models.Workbench{*wb})
	if err != nil {
		h.fail(c, err)
		return
	}
	row := h.workbenchRow(ctx, wb, n, costs[wb.ID])
	// The look is recorded before anything of the owner's is read (the
	// log's last lines, the history): a look that cannot be recorded, so
	// that its owner could not learn of it, is not given. One row per
	// administrator and workbench in models.ViewAuditEvery: the page's
	// live region refetches it every 5 s (without JavaScript it reloads
	// while the workbench is on its way). That refetch comes here too, so
	// a page left open is recorded again once a window has passed: it
	// still reads the owner's workbench.
	if _, err := h.wbs.RecordView(ctx, models.AuditRecord{Actor: currentUser(c).Username, Action: models.ActionViewAsAdmin,
		Target: wb.ID, After: map[string]string{"owner": row.Owner, "workbench": wb.Name}}); err != nil {
		h.fail(c, err)
		return
	}
	hist, err := h.store.WorkbenchHistory(ctx, wb.ID)
	if err != nil {
		h.fail(c, err)
		return
	}
	row.URL, row.OpenLabel = "", ""
	// The deadlines as the owner's, with the limits named theirs; "+1 h"
	// is the owner's to ask for, so neither it nor why there is none.
	row.Deadline = h.deadlineView(ctx, wb, row.Owner)
	row.Deadline.CanExtend, row.Deadline.ExtendRefusal = false, ""
	if row.State == models.StateFailed {
		row.Reason = runtime.AdminWording(row.Reason) // as the list words it
	}
	v := templates.AdminWorkbenchView{Owner: row.Owner, GPUIdle: h.gpuIdleView(ctx, wb),
		ExitLogs: hideNotebookToken(wb.ExitLogs, wb.Token), ReasonDetails: hideNotebookToken(wb.ReasonDetails, wb.Token),
		NoReload: c.Query("reload") == "off"}
	v.GPUTelemetry, v.GPUEnergy = h.workbenchGPUFacts(ctx, wb, &row)
	v.WB = row
	for _, e := range hist {
		v.History = append(v.History, templates.HistoryRow{At: templates.WhenIn(ctx, &e.At), State: e.State, Message: e.Message})
	}
	if rc, err := h.wbs.ContainerLogs(ctx, wb.ID, 50); err == nil {
		b, _ := io.ReadAll(io.LimitReader(rc, 64<<10))
		rc.Close()
		v.Logs = hideNotebookToken(string(b), wb.Token)
	}
	h.render(c, http.StatusOK, templates.AdminWorkbenchPage(h.page(c, i18n.T(ctx, "%s's workbench %s", row.Owner, wb.Name)), v))
}

// workbenchGPUFacts names the GPUs and units wb holds on its page's row and
// reads their telemetry and the run's measured energy ("" when none).
func (h *Handler) workbenchGPUFacts(ctx context.Context, wb *models.Workbench, row *templates.WorkbenchRow) ([]templates.WBGPUTelemetry, string) {
	gpuNames := h.gpuNames(ctx, wb)
	row.GPUNames = gpuNames
	for i := range row.Units {
		row.Units[i].GPU = gpuNames[wb.Units[i].GPUUUID]
	}
	tel := h.wbGPUTelemetry(ctx, wb, gpuNames)
	if len(tel) > 0 {
		if iv, err := h.store.OpenIntervalOf(ctx, wb.ID); err == nil {
			if mJ, err := h.store.IntervalEnergyMJ(ctx, iv.ID); err == nil && mJ > 0 {
				return tel, pricing.FormatKWh(mJ) + " kWh"
			}
		}
	}
	return tel, ""
}

// tokenArgument is a secret handed on a command line or in an address, as
// a notebook's start script may log it: "--IdentityProvider.token=…",
// "/lab?token=…", "JUPYTER_TOKEN=…".
var tokenArgument = regexp.MustCompile(`(?i)(token=)[^\s&"']+`)

// hideNotebookToken takes the workbench's notebook token, and any token
// handed as tokenArgument, out of what an administrator reads of its log
// (docker-stacks images print their whole start command). A token too
// short to be one of the portal's (32 characters) is not searched for
// alone: it would blank ordinary words.
func hideNotebookToken(s, token string) string {
	if len(token) >= 16 {
		s = strings.ReplaceAll(s, token, "…")
	}
	return tokenArgument.ReplaceAllString(s, "${1}…")
}
