package handlers

import (
	"net/http"

	"github.com/gin-gonic/gin"
)

// apiMeUpdateBody is PATCH /api/v1/me: the settings a user changes for
// themselves (their name, address and role are an administrator's).
type apiMeUpdateBody struct {
	EmailWorkbenchNotices *bool   `json:"email_workbench_notices"`
	TimeZone              *string `json:"time_zone"`
}

// apiMeUpdate: PATCH /api/v1/me {"email_workbench_notices": false,
// "time_zone": "Asia/Shanghai"} — the Notifications page's email choice and
// the time zone page's zone, for scripts; answers GET /me's body.
func (h *Handler) apiMeUpdate(c *gin.Context) {
	var body apiMeUpdateBody
	if !h.bindJSON(c, &body) {
		return
	}
	if body.EmailWorkbenchNotices == nil && body.TimeZone == nil {
		h.fail(c, newError(http.StatusBadRequest, "invalid_body", `nothing to change: this endpoint takes {"email_workbench_notices": true|false, "time_zone": "Asia/Shanghai"}`))
		return
	}
	u := currentUser(c)
	if body.TimeZone != nil {
		// First: a zone refused (422) changes nothing.
		if err := h.setTimeZone(c, u, *body.TimeZone); err != nil {
			h.fail(c, err)
			return
		}
	}
	if body.EmailWorkbenchNotices != nil {
		if err := h.setEmailNotices(c, u, *body.EmailWorkbenchNotices); err != nil {
			h.fail(c, err)
			return
		}
	}
	fresh, err := h.store.UserByID(c.Request.Context(), u.ID)
	if err != nil {
		h.fail(c, err)
		return
	}
	h.writeMe(c, fresh)
}
