package handlers

import "github.com/gin-gonic/gin"

// flashKindKey holds the kind of the pending flash ("error"; absent means a
// success), so the layout can colour it: an error must look like one.
const flashKindKey = "flash_kind"

// flashError shows msg as an error on the next page. msg should say what to
// do next, not only what went wrong.
func (h *Handler) flashError(c *gin.Context, msg string) {
	h.sessions.Put(c.Request.Context(), flashKey, msg)
	h.sessions.Put(c.Request.Context(), flashKindKey, "error")
	c.Set(pendingErrorKey, msg) // for seeOther, should the session not be saved
}

// pendingErrorKey holds, in the request's gin context, the error message
// flashError put in the session.
const pendingErrorKey = "workbench.pending_flash_error"
