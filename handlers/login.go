package handlers

import (
	"context"
	"errors"
	"math"
	"net/http"
	"strconv"
	"strings"
	"time"

	"github.com/gin-gonic/gin"

	"workbench/models"
	"workbench/templates"
	"workbench/templates/i18n"
)

func (h *Handler) loginForm(c *gin.Context) {
	if currentUser(c) != nil {
		h.seeOther(c, safeNext(c.Query("next")))
		return
	}
	h.render(c, http.StatusOK, templates.LoginPage(h.page(c, i18n.T(c.Request.Context(), "Log in")), h.loginForm0(templates.LoginForm{Next: safeNext(c.Query("next"))})))
}

// login checks the form and rotates the session token so a planted session
// id is useless. Before any password is hashed the attempt is reserved with
// the throttle (429 when it must wait), and the check waits for room in the
// store's hash gate (503 when it stays full for models.DefaultHashWait): a
// class logging in at once waits a moment instead of being turned away; a burst of guesses costs neither
// memory nor guesses beyond the limits. See LoginThrottle and
// models/hash_gate.go.
func (h *Handler) login(c *gin.Context) {
	ctx := c.Request.Context()
	username := strings.ToLower(strings.TrimSpace(c.PostForm("username")))
	password := c.PostForm("password")
	next := safeNext(c.PostForm("next"))
	form := h.loginForm0(templates.LoginForm{Username: username, Next: next})
	addr := c.ClientIP()
	// refuse shows the form again, with what was typed, saying why.
	refuse := func(status int, msg string) {
		form.Error = msg
		h.render(c, status, templates.LoginPage(h.page(c, i18n.T(ctx, "Log in")), form))
	}

	device := ""
	if ck, err := c.Request.Cookie(deviceCookie); err == nil {
		device = ck.Value
	}
	trusted, err := h.throttle.DeviceTrusted(ctx, username, device)
	if err != nil {
		// Not known is how a new browser logs in: held back by its
		// address's delay, if any, and nothing more.
		h.log.Warn("login: device token not checked", "username", username, "err", err)
	}
	// Held back only by logins from this address still being checked (a
	// class behind one NAT address logging in together): wait for them,
	// as long as a check waits for a hash slot.
	res, hold := h.throttle.ReserveWaiting(ctx, username, addr, trusted, models.DefaultHashWait)
	if res == nil {
		secs := int(math.Ceil(hold.Wait.Seconds()))
		c.Header("Retry-After", strconv.Itoa(secs))
		h.log.Warn("login throttled", "username", username, "addr", addr, "retry_after_s", secs, "by_address", hold.ByAddress)
		refuse(http.StatusTooManyRequests, holdText(ctx, hold, secs))
		return
	}
	u, err := h.store.Authenticate(c.Request.Context(), username, password)
	if ctx.Err() != nil && errors.Is(err, ctx.Err()) {
		// The browser left while its check waited for a slot: the
		// password was not checked, so no guess is counted.
		res.Cancel()
		h.log.Info("login abandoned while waiting for a password-check slot", "username", username, "addr", addr)
		c.Status(http.StatusServiceUnavailable)
		return
	}
	if errors.Is(err, models.ErrHashBusy) {
		res.Cancel()
		c.Header("Retry-After", "1")
		h.log.Warn("login refused: all password-check slots stayed busy", "username", username, "addr", addr, "waiting", h.store.HashChecksWaiting())
		refuse(http.StatusServiceUnavailable, i18n.T(ctx, "The portal is busy checking other logins. Try again in a moment."))
		return
	}
	if errors.Is(err, models.ErrBadCredentials) {
		res.Failed()
		h.log.Info("login failed", "username", username, "addr", addr)
		refuse(http.StatusUnauthorized, i18n.T(ctx, "Invalid username or password."))
		return
	}
	if errors.Is(err, models.ErrAccountDisabled) {
		// The right password: no failed guess to count against the name
		// or the address (a disabled colleague retrying would otherwise
		// lock out everyone behind the same NAT).
		res.Cancel()
		h.log.Info("login refused: account disabled", "username", username, "addr", addr)
		refuse(http.StatusForbidden, i18n.T(ctx, "Your account is disabled. Ask an administrator."))
		return
	}
	if err != nil {
		res.Cancel()
		h.fail(c, err)
		return
	}
	res.Succeeded()
	if h.oidc != nil && h.oidc.cfg.LocalLoginAdminsOnly && !u.IsAdmin() {
		h.log.Info("login refused: password sign-in is for admins only", "username", username, "addr", addr)
		refuse(http.StatusForbidden, i18n.T(ctx, "Sign in with %s: password sign-in is for administrators only.", h.oidc.cfg.Label))
		return
	}
	if err := h.sessions.RenewToken(ctx); err != nil {
		h.fail(c, err)
		return
	}
	h.sessions.Put(ctx, sessionUserKey, u.ID)
	h.sessions.Put(ctx, sessionEpochKey, u.AuthEpoch)
	// Saved here, not on the way out: a session the database cannot
	// store (its disk full or read-only) was only logged, and the browser,
	// sent on with no session, came back to this form with no word why.
	// (The save on the way out finds it saved and writes nothing.)
	if _, _, err := h.sessions.Commit(ctx); err != nil {
		if models.Unwritable(err) {
			h.store.NoteWriteRefused(err)
			h.log.Error("login: the session cannot be saved", "username", u.Username, "err", err)
			refuse(http.StatusServiceUnavailable, i18n.T(ctx, "Your password is right, but the portal cannot sign anyone in right now: the disk of its database is full or read-only. Tell an administrator; running workbenches keep running."))
			return
		}
		h.fail(c, err)
		return
	}
	token, err := h.throttle.TrustDevice(ctx, u.ID, device)
	if err != nil {
		// The login stands; only this browser is not known next time.
		h.log.Warn("login: device token not kept", "username", u.Username, "err", err)
	}
	if token != "" {
		// Sent back only to /login, never readable by scripts.
		http.SetCookie(c.Writer, &http.Cookie{Name: deviceCookie, Value: token, Path: "/login", MaxAge: int(deviceTrustFor / time.Second),
			HttpOnly: true, Secure: h.sessions.Cookie.Secure, SameSite: http.SameSiteLaxMode})
	}
	h.log.Info("login", "username", u.Username, "addr", addr)
	// Audited as single sign-on is (session.login_sso): an admin reading
	// the log of a leaked password sees when and from where it was used.
	h.recordAs(c, u.Username, "session.login", u.Username, nil, map[string]string{"addr": addr})
	h.seeOther(c, next)
}

// holdText says why a password is not checked yet, and for how long
// (secs, the Retry-After): the address's delay is told apart from the
// account's, since someone behind a shared address may have typed nothing
// wrong ("Too many failed attempts" was said to a colleague of a guesser).
// Neither says whether the account exists: unknown names are counted alike.
func holdText(ctx context.Context, hold LoginHold, secs int) string {
	if hold.ByAddress {
		return i18n.T(ctx, "Too many wrong passwords from your network address, for any account. Try again in %s.", waitTextIn(ctx, secs))
	}
	return i18n.T(ctx, "Too many wrong passwords for this account. Try again in %s.", waitTextIn(ctx, secs))
}

// waitText says a wait in seconds the way a person would.
func waitText(secs int) string { return waitTextIn(context.Background(), secs) }

// waitTextIn is waitText in the reader's language.
func waitTextIn(ctx context.Context, secs int) string {
	switch {
	case secs < 90:
		return i18n.T(ctx, "%d seconds", secs)
	case secs < 90*60:
		return i18n.T(ctx, "%d minutes", (secs+59)/60)
	default:
		return i18n.T(ctx, "%d hours", (secs+3599)/3600)
	}
}

func (h *Handler) logout(c *gin.Context) {
	if ck, err := c.Request.Cookie(h.sessions.Cookie.Name); err == nil {
		h.proxyAuth.forget(ck.Value) // the notebook proxy stops trusting it now
		h.endNotebookAccess(c, models.HashSecret(ck.Value))
	}
	if err := h.sessions.Destroy(c.Request.Context()); err != nil {
		h.fail(c, err)
		return
	}
	// In path mode notebooks share this origin: "storage" unregisters any
	// service worker a notebook registered and clears what it stored.
	c.Header("Clear-Site-Data", `"storage"`)
	h.seeOther(c, "/login")
}
