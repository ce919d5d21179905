package handlers

import (
	"github.com/gin-gonic/gin"
)

// refuseTo answers a form's refusal: msg (the caller's words around the
// refusal) flashed on back, then 303 there. While the database cannot be
// written (a full disk, or a stop not recorded yet), the flash could not
// be kept with the session and back came again without a word — a Start,
// a Delete or an extra port of a workbench whose stop is not recorded yet
// did nothing, silently; seeOther then answers msg at once on an error
// page (503) instead.
func (h *Handler) refuseTo(c *gin.Context, msg, back string) {
	h.flashError(c, msg)
	h.seeOther(c, back)
}
