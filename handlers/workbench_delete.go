package handlers

import (
	"net/http"

	"github.com/gin-gonic/gin"
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
		h.flashError(c, "Could not delete: "+classify(err).Message)
		seeOther(c, "/workbenches/"+wb.ID)
		return
	}
	if isAPI(c) {
		c.Status(http.StatusNoContent)
		return
	}
	h.flash(c, "Workbench "+wb.Name+" deleted.")
	seeOther(c, "/")
}
