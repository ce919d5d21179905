package handlers

import (
	"net/http"
	"strings"

	"github.com/gin-gonic/gin"

	"workbench/orchestrator"
	"workbench/templates/i18n"
)

// workbenchStart: start a stopped workbench again (GPUs allocated afresh).
// mode=cpu (form field, or query parameter for the API) starts it as its
// flavor's CPU-only twin instead: same image and home, no GPU. A workbench
// whose last run was CPU-only, started with its GPUs when none are free,
// waits in the queue for them (state queued) rather than being refused.
// queue=on (the page's "wait in the queue" box, checked by default) or
// ?queue=true (the API) does the same for any start that cannot be placed
// now: no free units, or a concurrency limit (docs/scheduling.md).
func (h *Handler) workbenchStart(c *gin.Context) {
	wb, ok := h.ownedWorkbench(c)
	if !ok {
		return
	}
	queue, ok := h.queryBool(c, "queue")
	if !ok {
		return
	}
	switch c.Query("mode") {
	case "", "cpu", "gpu":
	default:
		h.fail(c, newError(http.StatusBadRequest, "invalid_mode", "mode: cpu (its flavor's CPU-only twin) or gpu"))
		return
	}
	opt := orchestrator.StartOptions{CPUOnly: c.PostForm("mode") == "cpu" || c.Query("mode") == "cpu",
		Queue: c.PostForm("queue") == "on" || queue}
	if err := h.wbs.StartAs(c.Request.Context(), wb.ID, currentUser(c), opt); err != nil {
		if isAPI(c) {
			h.fail(c, err)
			return
		}
		h.refuseTo(c, i18n.T(c.Request.Context(), "Could not start: %s.", h.refusalClause(c, err)), "/workbenches/"+wb.ID)
		return
	}
	if isAPI(c) {
		h.apiWorkbench(c)
		return
	}
	// Started from the notebook tab's "not running" page: back to the
	// notebook's address, where that page follows the start (it reloads
	// itself) and the notebook itself answers once it runs. Only this
	// workbench's own path counts: no redirect anywhere else.
	if back := c.PostForm("back"); sameOriginPath(back) && strings.HasPrefix(back, orchestrator.BaseURL(wb.ID)) {
		h.seeOther(c, back)
		return
	}
	h.seeOther(c, "/workbenches/"+wb.ID)
}
