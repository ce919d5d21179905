package handlers

import (
	"context"
	"errors"

	"github.com/gin-gonic/gin"

	"workbench/models"
	"workbench/orchestrator"
	"workbench/templates"
	"workbench/templates/i18n"
)

// workbenchStop: the owner stops a workbench (always allowed). The form
// field or query force=true kills the container without the grace period
// (offered after a stop failed). The stop runs to its end in the manager
// even when this request is cut (a reload, a closed tab); the answer only
// waits for it.
func (h *Handler) workbenchStop(c *gin.Context) {
	wb, ok := h.ownedWorkbench(c)
	if !ok {
		return
	}
	force, ok := h.queryBool(c, "force")
	if !ok {
		return
	}
	ctx := c.Request.Context()
	stop := h.wbs.Stop
	if c.PostForm("force") == "true" || force {
		stop = h.wbs.ForceStop
		// Unsaved work in memory is lost: asked without JavaScript too.
		if !h.askedFirst(c, templates.ConfirmView{Subject: i18n.T(ctx, "Workbench %s", wb.Name),
			Question: i18n.T(ctx, "Kill the container now? Unsaved work in its memory is lost."),
			Yes:      i18n.T(ctx, "Force stop"), Back: "/workbenches/" + wb.ID}) {
			return
		}
	}
	if err := stop(ctx, wb.ID, ""); err != nil {
		if clientGone(ctx, err) {
			h.log.Info("stop: the client left; the stop goes on", "id", wb.ID)
			return
		}
		if h.backToUnrecordedStop(c, err, wb.ID) {
			return
		}
		var se *orchestrator.StopError
		if isAPI(c) || !errors.As(err, &se) {
			h.fail(c, err)
			return
		}
		// The page shows the failure with "Retry stop" and "Force stop".
		h.flash(c, i18n.T(c.Request.Context(), "Could not stop the workbench: %s.", i18n.ReasonClause(c.Request.Context(), se.Message)))
		h.seeOther(c, "/workbenches/"+wb.ID)
		return
	}
	if isAPI(c) {
		h.apiWorkbench(c)
		return
	}
	if wb.State == models.StateQueued && !h.startedSince(ctx, wb) {
		// It never held a GPU: "its GPUs are free" would say otherwise.
		h.flash(c, i18n.T(c.Request.Context(), "Left the queue: the workbench never started and nothing was charged; start it again when you like."))
	} else {
		h.flash(c, i18n.T(c.Request.Context(), "Workbench stopped. Its GPUs are free; your home files are kept."))
	}
	h.seeOther(c, "/workbenches/"+wb.ID)
}

// startedSince reports whether a run of wb started after wb was read (a
// queued one placed just before its owner's stop reached it).
func (h *Handler) startedSince(ctx context.Context, wb *models.Workbench) bool {
	now, err := h.store.WorkbenchByID(ctx, wb.ID)
	if err != nil || now.StartedAt == nil {
		return false
	}
	return wb.StartedAt == nil || now.StartedAt.After(*wb.StartedAt)
}

// clientGone reports whether err is only the caller's request ending (the
// work itself goes on in the manager): nothing to answer, nothing to log as
// a failure.
func clientGone(ctx context.Context, err error) bool {
	return ctx.Err() != nil && (errors.Is(err, context.Canceled) || errors.Is(err, context.DeadlineExceeded))
}

// adminWorkbenchStop: an admin stops anyone's workbench (recorded as
// workbench.admin_stop), as its owner's Stop does — with the grace period,
// so Jupyter can save — and its owner is told. force=true (the form field
// or the query, as for the owner) kills the container at once (recorded as
// workbench.force_stop): the list offers it where a stop failed. A form
// returns to where it was sent from: the list, or the workbench's page
// when its field back names that page (adminStopBack).
func (h *Handler) adminWorkbenchStop(c *gin.Context) {
	ctx := c.Request.Context()
	force, ok := h.queryBool(c, "force")
	if !ok {
		return
	}
	force = force || c.PostForm("force") == "true"
	wb, err := h.store.WorkbenchByID(ctx, c.Param("id"))
	if err != nil {
		h.fail(c, err)
		return
	}
	switch wb.State {
	case models.StateStopped, models.StateFailed, models.StatePreempted:
		// Nothing to stop (a second click, or a stop that beat this one):
		// no audit row claiming a stop that did nothing. The API answers
		// the workbench as it is, as after a stop.
		if isAPI(c) {
			h.apiWorkbench(c)
			return
		}
		h.flash(c, i18n.T(c.Request.Context(), "Workbench %s was already stopped; nothing changed.", wb.Name))
		h.seeOther(c, adminStopBack(c, wb.ID))
		return
	}
	// Someone else's work: asked without JavaScript too.
	q := templates.ConfirmView{Subject: i18n.T(ctx, "Workbench %s", wb.Name), Question: i18n.T(ctx, "Stop this workbench? Its owner is told."),
		Yes: i18n.T(ctx, "Stop"), Back: adminStopBack(c, wb.ID)}
	if force {
		q.Question, q.Yes = i18n.T(ctx, "Kill the container now? Unsaved work in its memory is lost; its owner is told."), i18n.T(ctx, "Force stop")
	}
	if !h.askedFirst(c, q) {
		return
	}
	reason := models.Reasonf("stopped by an administrator (%s)", currentUser(c).Username)
	// Recorded before the stop: it goes on even when this request is cut.
	action, stop := "workbench.admin_stop", h.wbs.StopByAdmin
	if force {
		action, stop = "workbench.force_stop", h.wbs.ForceStopByAdmin
	}
	h.record(c, action, wb.ID, map[string]string{"state": wb.State}, map[string]string{"state": "stopped"})
	if err := stop(ctx, wb.ID, reason); err != nil {
		if clientGone(ctx, err) {
			return
		}
		if h.backToUnrecordedStop(c, err, wb.ID) {
			return
		}
		var se *orchestrator.StopError
		if isAPI(c) || !errors.As(err, &se) {
			h.fail(c, err)
			return
		}
		// Back to the list (or the page), whose row says "stop failed"
		// and offers the force stop (an error page left the admin nothing
		// to click).
		h.flashError(c, i18n.T(ctx, "Could not stop the workbench: %s.", i18n.ReasonClause(ctx, se.Message)))
		h.seeOther(c, adminStopBack(c, wb.ID))
		return
	}
	if isAPI(c) {
		// 200 with the workbench, as the owner's stop answers (it was 204
		// with no body: a script had to GET the workbench again to see
		// its state).
		h.apiWorkbench(c)
		return
	}
	h.flash(c, i18n.T(c.Request.Context(), "Workbench %s stopped.", wb.Name))
	h.seeOther(c, adminStopBack(c, wb.ID))
}

// adminStopBack is where an admin's stop form returns: the workbench's
// page when the form came from it (its field back is that page's path;
// nothing else is followed), else the list of all workbenches.
func adminStopBack(c *gin.Context, id string) string {
	if page := "/workbenches/" + id; c.PostForm("back") == page {
		return page
	}
	return "/admin/workbenches"
}

// backToUnrecordedStop answers a form's stop that was carried out but not
// recorded by going back to the workbench's page, which shows it stopped
// and says why it is not recorded yet (an error page said it "may still
// show as running", and a flash could not be kept). It reports whether it
// answered; API clients get the error instead.
func (h *Handler) backToUnrecordedStop(c *gin.Context, err error, id string) bool {
	var ure *orchestrator.UnrecordedStopError
	if isAPI(c) || !errors.As(err, &ure) {
		return false
	}
	h.seeOther(c, "/workbenches/"+id)
	return true
}
