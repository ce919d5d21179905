package handlers

import (
	"github.com/gin-gonic/gin"

	"workbench/models"
	"workbench/templates/i18n"
)

// notificationEmail: POST /notifications/email — whether what happens to
// the user's own workbenches is also emailed (the checkbox
// email_workbench_notices; unchecked, a form sends nothing for it). The
// in-app notifications stay either way.
func (h *Handler) notificationEmail(c *gin.Context) {
	on := c.PostForm("email_workbench_notices") == "on"
	if err := h.setEmailNotices(c, currentUser(c), on); err != nil {
		h.fail(c, err)
		return
	}
	if on {
		h.flash(c, i18n.T(c.Request.Context(), "What happens to your workbenches is emailed to you too."))
	} else {
		h.flash(c, i18n.T(c.Request.Context(), "What happens to your workbenches is no longer emailed to you; it stays here."))
	}
	h.seeOther(c, "/notifications")
}

// setEmailNotices saves the user's choice, audited (the page and
// PATCH /api/v1/me).
func (h *Handler) setEmailNotices(c *gin.Context, u *models.User, on bool) error {
	return h.audited(c, func(tx *models.Store) (models.AuditRecord, error) {
		return auditRec("user.email_notices", u.Username, map[string]bool{"email_workbench_notices": u.EmailWorkbenchNotices},
			map[string]bool{"email_workbench_notices": on}), tx.SetEmailWorkbenchNotices(c.Request.Context(), u.ID, on)
	})
}
