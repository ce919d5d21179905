package handlers

import (
	"net/http"
	"strings"

	"github.com/gin-gonic/gin"

	"workbench/templates"
	"workbench/templates/i18n"
)

// workbenchDelete deletes a workbench; ?delete_data=true (API) or the form
// field delete_data also deletes the user's home volume.
func (h *Handler) workbenchDelete(c *gin.Context) {
	wb, ok := h.ownedWorkbench(c)
	if !ok {
		return
	}
	deleteData, ok := h.deleteDataParam(c)
	if !ok {
		return
	}
	// The home volume goes only after a question: the page asks it with
	// confirm() and marks the form; without JavaScript this page asks it
	// (a ticked box deleted every file at once). Its answer, data_confirmed,
	// answers the plain delete's question too.
	if deleteData && !isAPI(c) && c.PostForm("data_confirmed") != "true" {
		h.render(c, http.StatusOK, templates.DeleteDataConfirmPage(h.page(c, i18n.T(c.Request.Context(), "Delete")),
			templates.DeleteDataConfirmView{ID: wb.ID, Name: wb.Name}))
		return
	}
	ctx := c.Request.Context()
	// Keeping the home volume, the workbench still goes for good (its
	// container, what was installed outside the home): asked too.
	if !deleteData && !h.askedFirst(c, templates.ConfirmView{Subject: i18n.T(ctx, "Workbench %s", wb.Name),
		Question: i18n.T(ctx, "Delete this workbench? Your home volume is kept."), Yes: i18n.T(ctx, "Delete"), Back: "/workbenches/" + wb.ID}) {
		return
	}
	if err := h.wbs.Delete(ctx, wb.ID, currentUser(c), deleteData); err != nil {
		if clientGone(ctx, err) {
			return // the deletion goes on in the manager
		}
		if isAPI(c) {
			h.fail(c, err)
			return
		}
		h.refuseTo(c, i18n.T(c.Request.Context(), "Could not delete: %s.", h.refusalClause(c, err)), "/workbenches/"+wb.ID)
		return
	}
	if isAPI(c) {
		c.Status(http.StatusNoContent)
		return
	}
	if deleteData {
		h.flash(c, i18n.T(c.Request.Context(), "Workbench %s deleted, and your home data with it.", wb.Name))
	} else {
		h.flash(c, i18n.T(c.Request.Context(), "Workbench %s deleted; your home data is kept.", wb.Name))
	}
	h.seeOther(c, "/")
}

// deleteDataParam reads delete_data (query or form) as a yes or a no: a
// checkbox without a value sends "on", scripts send 1 or true. A value
// that is neither is refused (400) before anything is deleted: a typo must
// not decide whether the data goes ("on" kept it without a word).
//
// The API takes true or false only, as its other on/off parameters do
// (README): "yes" or "1" from a script is more likely a guess than a
// decision about someone's files.
func (h *Handler) deleteDataParam(c *gin.Context) (deleteData, ok bool) {
	if isAPI(c) {
		return h.queryBool(c, "delete_data")
	}
	v := c.Query("delete_data")
	if v == "" {
		v = c.PostForm("delete_data")
	}
	switch strings.ToLower(strings.TrimSpace(v)) {
	case "true", "1", "on", "yes":
		return true, true
	case "", "false", "0", "off", "no":
		return false, true
	}
	h.fail(c, newError(http.StatusBadRequest, "invalid_delete_data", "delete_data: must be true or false (nothing was deleted)"))
	return false, false
}
