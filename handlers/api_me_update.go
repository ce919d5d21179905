package handlers

import (
	"net/http"

	"github.com/gin-gonic/gin"
)

// apiMeUpdateBody is PATCH /api/v1/me: the settings a user changes for
// themselves (their name, address and role are an administrator's).
type apiMeUpdateBody struct {
	EmailWorkbenchNotices *bool `json:"email_workbench_notices"`
}

// apiMeUpdate: PATCH /api/v1/me {"email_workbench_notices": false} — the
// Notifications page's email choice, for scripts; answers GET /me's body.
func (h *Handler) apiMeUpdate(c *gin.Context) {
	var body apiMeUpdateBody
	if !h.bindJSON(c, &body) {
		return
	}
	if body.EmailWorkbenchNotices == nil {
		h.fail(c, newError(http.StatusBadRequest, "invalid_body", `nothing to change: this endpoint takes {"email_workbench_notices": true|false}`))
		return
	}
	u := currentUser(c)
	if err := h.setEmailNotices(c, u, *body.EmailWorkbenchNotices); err != nil {
		h.fail(c, err)
		return
	}
	fresh, err := h.store.UserByID(c.Request.Context(), u.ID)
	if err != nil {
		h.fail(c, err)
		return
	}
	h.writeMe(c, fresh)
}
