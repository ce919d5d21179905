package handlers

import (
	"net/http"

	"github.com/gin-gonic/gin"

	"workbench/templates/i18n"
)

// workbenchDelete deletes a workbench; ?delete_data=true (API) or the form
// field delete_data also deletes the user's home volume.
func (h *Handler) workbenchDelete(c *gin.Context) {
	wb, ok := h.ownedWorkbench(c)
	if !ok {
		return
	}
	deleteData := c.Query("delete_data") == "true" || c.PostForm("delete_data") == "true"
	ctx := c.Request.Context()
	if err := h.wbs.Delete(ctx, wb.ID, currentUser(c), deleteData); err != nil {
		if clientGone(ctx, err) {
			return // the deletion goes on in the manager
		}
		if isAPI(c) {
			h.fail(c, err)
			return
		}
		h.flashError(c, i18n.T(c.Request.Context(), "Could not delete: %s", h.refusalT(c, err)))
		seeOther(c, "/workbenches/"+wb.ID)
		return
	}
	if isAPI(c) {
		c.Status(http.StatusNoContent)
		return
	}
	h.flash(c, i18n.T(c.Request.Context(), "Workbench %s deleted.", wb.Name))
	seeOther(c, "/")
}
