package handlers

import (
	"context"
	"net/http"

	"github.com/gin-gonic/gin"

	"workbench/templates/i18n"
)

// loginLockState is what the users page shows of an account's failed
// password attempts, in the reader's language: the account-wide lock, or
// else the delay its logins from one address wait.
func (h *Handler) loginLockState(ctx context.Context, username string) (failures int, lockedFor, delayedFor string) {
	n, locked, delayed := h.throttle.AccountState(username)
	if locked > 0 {
		lockedFor = i18n.T(ctx, "for %s", waitTextIn(ctx, int(locked.Seconds())+1))
	}
	if delayed > 0 {
		delayedFor = i18n.T(ctx, "for %s", waitTextIn(ctx, int(delayed.Seconds())+1))
	}
	return n, lockedFor, delayedFor
}

// clearLoginLock forgets every failed login counted against the user, from
// any address, so a locked-out account can log in again; audited.
func (h *Handler) clearLoginLock(c *gin.Context) (string, bool) {
	u, ok := h.liveUserParam(c)
	if !ok {
		return "", false
	}
	failures, _, _ := h.throttle.AccountState(u.Username)
	h.throttle.ClearAccount(u.Username)
	h.record(c, "user.clear_login_lock", u.Username, map[string]int{"failed_logins": failures}, map[string]int{"failed_logins": 0})
	return u.Username, true
}

// adminClearLoginLock: POST /admin/users/{id}/login-lock/clear (the button).
func (h *Handler) adminClearLoginLock(c *gin.Context) {
	name, ok := h.clearLoginLock(c)
	if !ok {
		return
	}
	h.flash(c, trc(c, "Failed logins of %s cleared; the account can log in again.", name))
	h.seeOther(c, "/admin/users")
}

// apiClearLoginLock: DELETE /api/v1/admin/users/{id}/login-lock.
func (h *Handler) apiClearLoginLock(c *gin.Context) {
	if _, ok := h.clearLoginLock(c); ok {
		c.Status(http.StatusNoContent)
	}
}
