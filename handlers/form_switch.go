package handlers

import (
	"net/http"

	"github.com/gin-gonic/gin"
)

// formSwitch reads a form field that turns something on or off and is
// always sent by its button ("drained", "disabled"): "true" or "false".
// Anything else is refused with 400 rather than read as "off" (a crafted
// drained=maybe put a GPU back in service).
func (h *Handler) formSwitch(c *gin.Context, name string) (on, ok bool) {
	switch c.PostForm(name) {
	case "true":
		return true, true
	case "false":
		return false, true
	}
	h.fail(c, newError(http.StatusBadRequest, "invalid_"+name, name+": must be true or false"))
	return false, false
}
