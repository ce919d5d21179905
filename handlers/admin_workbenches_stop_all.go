package handlers

import (
	"errors"
	"net/url"

	"github.com/gin-gonic/gin"

	"workbench/models"
	"workbench/templates"
	"workbench/templates/i18n"
)

// adminWorkbenchesStopAll: POST /admin/workbenches/stop-all (form field
// group) — "Stop all shown" on /admin/workbenches filtered by a group: every
// running workbench of the group's members is stopped as the row's Stop
// does (StopByAdmin: the grace period, the owner told, each audited as
// workbench.admin_stop), asked first without JavaScript too. The stops are
// started and the page returns at once, "Stopping N workbenches of ml101":
// they go on in the manager whatever happens to this request, and the list
// shows them stopping.
func (h *Handler) adminWorkbenchesStopAll(c *gin.Context) {
	ctx := c.Request.Context()
	name := c.PostForm("group")
	back := "/admin/workbenches?" + url.Values{"group": {name}}.Encode()
	g, err := h.store.GroupByName(ctx, name)
	if errors.Is(err, models.ErrNotFound) {
		h.flashError(c, i18n.T(ctx, "There is no group %q: pick one from the list.", name))
		h.seeOther(c, "/admin/workbenches")
		return
	}
	if err != nil {
		h.fail(c, err)
		return
	}
	wbs, err := h.store.GroupMembersRunning(ctx, g.ID)
	if err != nil {
		h.fail(c, err)
		return
	}
	if len(wbs) == 0 {
		h.flash(c, i18n.T(ctx, "No workbench of %s is running: nothing to stop.", g.Name))
		h.seeOther(c, back)
		return
	}
	question := i18n.T(ctx, "Stop the %d running workbenches of %s? Their owners are told.", len(wbs), g.Name)
	if len(wbs) == 1 {
		question = i18n.T(ctx, "Stop the running workbench of %s? Its owner is told.", g.Name)
	}
	if !h.askedFirst(c, templates.ConfirmView{Subject: i18n.T(ctx, "Group %s", g.Name),
		Question: question,
		Yes:      i18n.T(ctx, "Stop all"), Back: back}) {
		return
	}
	reason := models.Reasonf("stopped by an administrator (%s)", currentUser(c).Username)
	ids := make([]string, len(wbs))
	for i, wb := range wbs {
		// Recorded before the stop, as the row's Stop is.
		h.record(c, "workbench.admin_stop", wb.ID, map[string]string{"state": wb.State}, map[string]string{"state": "stopped"})
		ids[i] = wb.ID
	}
	h.wbs.StopAllByAdmin(ctx, ids, reason)
	if len(ids) == 1 {
		h.flash(c, i18n.T(ctx, "Stopping the running workbench of %s.", g.Name))
	} else {
		h.flash(c, i18n.T(ctx, "Stopping %d workbenches of %s.", len(ids), g.Name))
	}
	h.seeOther(c, back)
}

// stopAllOffered: the list offers "Stop all shown" for a group filter
// alone (state all or running, no search): what it stops is then exactly
// the running rows shown, on every page.
func stopAllOffered(v templates.AdminWorkbenchesView) bool {
	return v.Group != "" && !v.UnknownGroup && v.Search == "" && (v.State == "" || v.State == models.StateRunning)
}
