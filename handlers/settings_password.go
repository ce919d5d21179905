package handlers

import (
	"errors"
	"net/http"
	"time"

	"github.com/gin-gonic/gin"

	"workbench/models"
	"workbench/templates"
	"workbench/templates/i18n"
)

// A user changes their own password on /settings/password: the current
// one is checked with the login's defences, the new one typed twice. The
// change ends every other session of theirs (models.ChangePassword); the
// session that made it is renewed and stays signed in.

func (h *Handler) passwordPage(c *gin.Context) {
	h.renderPassword(c, http.StatusOK, templates.FormErrors{})
}

func (h *Handler) renderPassword(c *gin.Context, status int, errs templates.FormErrors) {
	v := templates.PasswordView{Errors: errs}
	if currentUser(c).SSO() {
		v.SSO, v.SSOLabel = true, i18n.T(c.Request.Context(), "single sign-on")
		if h.oidc != nil {
			v.SSOLabel = h.oidc.cfg.Label
		}
	}
	h.render(c, status, templates.PasswordPage(h.page(c, i18n.T(c.Request.Context(), "Password")), v))
}

func (h *Handler) passwordChange(c *gin.Context) {
	ctx := c.Request.Context()
	u := currentUser(c)
	if u.SSO() {
		h.renderPassword(c, http.StatusConflict, templates.FormErrors{})
		return
	}
	newPw, again := c.PostForm("new_password"), c.PostForm("new_password_again")
	errs := templates.FormErrors{}
	if newPw != again {
		errs["new_password_again"] = i18n.T(ctx, "the two new passwords differ; type the same one twice")
	}
	if msg := h.checkOwnPassword(c, c.PostForm("current_password")); msg != "" {
		errs["current_password"] = msg
	}
	if len(errs) > 0 {
		h.renderPassword(c, http.StatusUnprocessableEntity, errs)
		return
	}
	var epoch int64
	err := h.audited(c, func(tx *models.Store) (models.AuditRecord, error) {
		var err error
		epoch, err = tx.ChangePassword(ctx, u.ID, newPw)
		return auditRec("user.change_password", u.Username, nil, nil), err
	})
	var ve *models.ValidationError
	switch {
	case errors.As(err, &ve):
		errs["new_password"] = trcMsg(c, ve.Message)
		h.renderPassword(c, http.StatusUnprocessableEntity, errs)
		return
	case err != nil:
		h.fail(c, err)
		return
	}
	// The other sessions ended with the old epoch; this one carries on
	// under a new token and the new epoch. Its notebook-domain sessions
	// were ended too, and the proxy forgets what it had cached for them.
	if err := h.sessions.RenewToken(ctx); err != nil {
		h.fail(c, err)
		return
	}
	h.sessions.Put(ctx, sessionEpochKey, epoch)
	h.proxyAuth.forgetUser(u.ID, time.Now())
	h.endSessionConnections(u)
	h.log.Info("password changed", "username", u.Username)
	h.flash(c, i18n.T(ctx, "Password changed. Your other sessions are signed out; your API tokens keep working."))
	h.seeOther(c, "/settings/password")
}

// apiPasswordChange: PUT /api/v1/me/password {"current_password": "…",
// "new_password": "…"}, the settings page's change for scripts and IDE
// clients: the current password is checked with the login's defences, and
// every browser and notebook-domain session of the user ends — one that
// made this call too, since it has no form to renew it from. API tokens
// keep working, this one included. 204 when changed.
func (h *Handler) apiPasswordChange(c *gin.Context) {
	var body struct {
		CurrentPassword string `json:"current_password"`
		NewPassword     string `json:"new_password"`
	}
	if !h.bindJSON(c, &body) {
		return
	}
	u := currentUser(c)
	if u.SSO() {
		h.fail(c, newError(http.StatusConflict, "sso_account", "this account signs in through single sign-on: change its password at the provider"))
		return
	}
	if msg := h.checkOwnPassword(c, body.CurrentPassword); msg != "" {
		h.fail(c, ownPasswordError(c, msg))
		return
	}
	ctx := c.Request.Context()
	err := h.audited(c, func(tx *models.Store) (models.AuditRecord, error) {
		_, err := tx.ChangePassword(ctx, u.ID, body.NewPassword)
		return auditRec("user.change_password", u.Username, nil, nil), err
	})
	if err != nil {
		h.fail(c, err)
		return
	}
	h.proxyAuth.forgetUser(u.ID, time.Now())
	h.endSessionConnections(u)
	h.log.Info("password changed", "username", u.Username, "via", "api")
	c.Status(http.StatusNoContent)
}

// endSessionConnections closes what the user's sessions had open: proxied
// WebSockets (a notebook's kernel), followed logs and event streams. A
// password change ends those sessions, and a stolen session's open kernel
// kept running code after it; token connections stay, as the tokens do.
func (h *Handler) endSessionConnections(u *models.User) {
	if n := h.live.CloseUserGrants(u.ID, isSessionGrant); n > 0 {
		h.log.Info("closed the connections of ended sessions", "username", u.Username, "connections", n)
	}
}
