package handlers

import (
	"net/http"

	"github.com/gin-gonic/gin"

	"workbench/orchestrator"
	"workbench/templates/i18n"
)

// saveImageBody is POST /api/v1/workbenches/{id}/save-image: running_ok
// confirms saving a running workbench (it is paused while its files are
// read).
type saveImageBody struct {
	Name      string `json:"name"`
	RunningOK bool   `json:"running_ok"`
}

// workbenchSaveImage: "Save as image" — the owner snapshots the
// workbench's container filesystem (not the home volume) as a private
// image that appears in their launch form.
func (h *Handler) workbenchSaveImage(c *gin.Context) {
	wb, ok := h.ownedWorkbench(c)
	if !ok {
		return
	}
	var req orchestrator.SaveImageRequest
	if isAPI(c) {
		var b saveImageBody
		if !h.bindJSON(c, &b) {
			return
		}
		req = orchestrator.SaveImageRequest{Name: b.Name, RunningOK: b.RunningOK}
	} else {
		req = orchestrator.SaveImageRequest{Name: c.PostForm("name"), RunningOK: c.PostForm("running_ok") == "true"}
	}
	img, err := h.wbs.SaveImage(c.Request.Context(), wb.ID, currentUser(c), req)
	if err != nil {
		if isAPI(c) {
			h.fail(c, err)
			return
		}
		h.refuseTo(c, i18n.T(c.Request.Context(), "Could not save as image: %s.", h.refusalClause(c, err)), "/workbenches/"+wb.ID)
		return
	}
	h.record(c, "image.save", img.Name, nil, img)
	if isAPI(c) {
		c.JSON(http.StatusCreated, img)
		return
	}
	h.flash(c, i18n.T(c.Request.Context(), "Saved as image %s: it is in your launch form.", img.Name))
	h.seeOther(c, "/images/saved")
}
