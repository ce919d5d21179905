package handlers

import (
	"context"
	"errors"
	"math"
	"net/http"
	"net/url"
	"sort"
	"strconv"
	"strings"
	"time"

	"github.com/gin-gonic/gin"

	"workbench/models"
	"workbench/templates"
	"workbench/templates/i18n"
)

// Sudo mode: every admin change and every new API token made through a
// browser session needs the password typed within the last sudoWindow. In
// path mode notebook script runs in the portal's origin and can send
// requests with the user's session; it cannot type the password, so it
// cannot create users, change prices or mint a long-lived token silently.
// Requests with an API token are exempt: the token itself was created in
// sudo mode (or by an admin out of band).
const sudoWindow = 10 * time.Minute

const (
	sessionSudoKey = "sudo_at" // unix seconds of the last confirmation in a page
	// sessionAPISudoKey is the last confirmation through POST
	// /api/v1/sudo: only it opens the JSON API's sudo-guarded calls to a
	// session. A confirmation typed into a page does not, since a notebook's
	// script could use that window with fetch() and no password.
	sessionAPISudoKey = "sudo_api_at"
	sudoFieldName     = "sudo_password" // the confirm page's password field
	ctxBearerKey      = "bearer"        // set when the caller sent an API token
	// ctxBearerExpiresKey holds that token's expiry (*time.Time, nil for
	// none): the tokens the request makes may not outlive it.
	ctxBearerExpiresKey = "bearer_expires"
)

// sudoFresh reports whether the caller may make a sudo-guarded change now.
func (h *Handler) sudoFresh(c *gin.Context) bool {
	if c.GetBool(ctxBearerKey) {
		return true
	}
	key := sessionSudoKey
	if isAPI(c) {
		key = sessionAPISudoKey
	}
	at := h.sessions.GetInt64(c.Request.Context(), key)
	return at > 0 && time.Since(time.Unix(at, 0)) < sudoWindow
}

// requireSudo guards unsafe methods. A form post without a recent
// confirmation gets the confirm page, which posts the same form again with
// the password added, so the admin's change is not lost; an API call gets
// 403 sudo_required and can confirm at POST /api/v1/sudo.
func (h *Handler) requireSudo(c *gin.Context) {
	switch c.Request.Method {
	case http.MethodGet, http.MethodHead, http.MethodOptions:
		c.Next()
		return
	}
	if !isAPI(c) && !c.GetBool(ctxBearerKey) && !h.fromPortalPage(c.Request) {
		h.refuseNotFromPortal(c)
		return
	}
	perPost := !h.sudoWindowServes(c)
	if h.sudoFresh(c) && !perPost {
		c.Next()
		return
	}
	if isAPI(c) {
		h.fail(c, newError(http.StatusForbidden, "sudo_required",
			"confirm your password first (POST /api/v1/sudo {\"password\": …} or the form at /sudo); API tokens need no confirmation"))
		return
	}
	if err := c.Request.ParseForm(); err != nil {
		h.fail(c, newError(http.StatusBadRequest, "invalid_body", "could not read the form"))
		return
	}
	form := templates.SudoForm{Action: c.Request.URL.RequestURI(), PerPost: perPost}
	h.sudoSSO(c, &form, refererPath(c))
	names := make([]string, 0, len(c.Request.PostForm))
	for k := range c.Request.PostForm {
		if k != sudoFieldName {
			names = append(names, k)
		}
	}
	sort.Strings(names)
	for _, k := range names {
		for _, v := range c.Request.PostForm[k] {
			form.Fields = append(form.Fields, templates.SudoField{Name: k, Value: v})
			if shown, ok := sudoShownValue(k, v); ok && strings.TrimSpace(v) != "" && !sudoUnshownFields[k] {
				if key, ok := sudoValueWords[k][v]; ok {
					shown = i18n.T(c.Request.Context(), key)
				}
				form.Shown = append(form.Shown, templates.SudoField{Name: sudoFieldLabel(c.Request.Context(), k), Value: shown})
			}
		}
	}
	if pw, ok := c.Request.PostForm[sudoFieldName]; ok {
		msg := h.confirmPassword(c, pw[0])
		if msg == "" {
			delete(c.Request.PostForm, sudoFieldName)
			delete(c.Request.Form, sudoFieldName)
			c.Next()
			return
		}
		form.Error = msg
	}
	// The page carries what the admin typed (a new user's password, say):
	// keep it out of caches.
	c.Header("Cache-Control", "no-store")
	h.render(c, http.StatusForbidden, templates.SudoPage(h.page(c, i18n.T(c.Request.Context(), "Confirm your password")), form))
	c.Abort()
}

// sudoWindowServes reports whether the 10 minutes a confirmation opens may
// serve this request. In path mode a form post from a browser that sends no
// Fetch Metadata cannot be told from a notebook script's own post: browsers
// send Sec-Fetch-* only to secure origins (https, localhost), and script
// sets the Referer fromPortalPage reads by rewriting its page's address
// (history.replaceState). So over plain HTTP on any other host each such
// post asks for the password itself, which script cannot type. API
// requests (their own confirmation, POST /api/v1/sudo, takes the password
// in the body), API tokens, a notebook domain (script is on another
// origin) and single sign-on accounts (no password to type each time; they
// confirm at the provider) keep the window.
func (h *Handler) sudoWindowServes(c *gin.Context) bool {
	if c.GetBool(ctxBearerKey) || isAPI(c) || h.cfg.NotebookDomain != "" || currentUser(c).SSO() {
		return true
	}
	return c.Request.Header.Get("Sec-Fetch-Mode") != ""
}

// confirmPassword checks the logged-in user's password with the login's
// defences (the attempt reserved with the throttle before hashing, a
// hashing slot or a refusal at once) and on success opens the sudo window.
// It returns "" or the message to show.
func (h *Handler) confirmPassword(c *gin.Context, password string) string {
	if msg := h.checkOwnPassword(c, password); msg != "" {
		return msg
	}
	h.sessions.Put(c.Request.Context(), sessionSudoKey, time.Now().Unix())
	h.record(c, "session.sudo", currentUser(c).Username, nil, nil)
	return ""
}

// checkOwnPassword checks the signed-in user's password, under the login
// throttle and the hash gate like a login; it returns what to tell them
// when it is refused ("" when it is theirs).
func (h *Handler) checkOwnPassword(c *gin.Context, password string) string {
	if password == "" {
		// Nothing typed is not a wrong password: neither throttled nor
		// audited as a guess.
		return i18n.T(c.Request.Context(), "Enter your password.")
	}
	u := currentUser(c)
	addr := c.ClientIP()
	res, hold := h.throttle.ReserveOrHold(u.Username, addr, false)
	if res == nil {
		h.log.Warn("password check throttled", "username", u.Username, "addr", addr, "by_address", hold.ByAddress)
		secs := int(math.Ceil(hold.Wait.Seconds()))
		c.Set(ctxPasswordWaitKey, secs) // for ownPasswordError
		return holdText(c.Request.Context(), hold, secs)
	}
	_, err := h.store.Authenticate(c.Request.Context(), u.Username, password)
	if ctxErr := c.Request.Context().Err(); errors.Is(err, models.ErrHashBusy) || (ctxErr != nil && errors.Is(err, ctxErr)) {
		// Busy for the whole wait, or the client left while waiting:
		// the password was not checked, so no guess is counted.
		res.Cancel()
		return i18n.T(c.Request.Context(), "The portal is busy checking other passwords. Try again in a moment.")
	}
	if err != nil {
		if errors.Is(err, models.ErrBadCredentials) {
			res.Failed()
			h.log.Info("password check failed", "username", u.Username, "addr", addr)
			// Audited, unlike a failed login: this caller holds a valid
			// session, and a session guessing its own password (to open
			// sudo mode or change the password) is what a stolen one does.
			// The throttle bounds how many rows it can write.
			h.record(c, "session.wrong_password", u.Username, nil, map[string]string{"addr": addr, "route": c.FullPath()})
			return i18n.T(c.Request.Context(), "That is not your password.")
		}
		res.Cancel()
		if errors.Is(err, models.ErrAccountDisabled) { // disabled since this session began
			return i18n.T(c.Request.Context(), "Your account is disabled. Ask an administrator.")
		}
		h.log.Error("password check", "username", u.Username, "err", err)
		return i18n.T(c.Request.Context(), "Your password could not be checked just now. Try again in a moment.")
	}
	res.Succeeded()
	return ""
}

// ctxPasswordWaitKey holds, after checkOwnPassword refused a check because
// of the throttle, the seconds to wait.
const ctxPasswordWaitKey = "password_wait"

// ownPasswordError is the API's answer to a refused password check: 429
// too_many_attempts with Retry-After while the throttle holds (the right
// password is refused then too, and "bad_password" told a script its
// password was wrong), else 403 bad_password — not 401: the caller is
// signed in (its token or session is good), and a client reading 401
// would drop a good credential.
func ownPasswordError(c *gin.Context, msg string) error {
	if secs := c.GetInt(ctxPasswordWaitKey); secs > 0 {
		c.Header("Retry-After", strconv.Itoa(secs))
		return newError(http.StatusTooManyRequests, "too_many_attempts", msg)
	}
	return newError(http.StatusForbidden, "bad_password", msg)
}

// sudoForm: GET /sudo?next=/path shows the confirm page on its own.
func (h *Handler) sudoForm(c *gin.Context) {
	form := templates.SudoForm{Next: safeNext(c.Query("next"))}
	h.sudoSSO(c, &form, form.Next)
	h.render(c, http.StatusOK, templates.SudoPage(h.page(c, i18n.T(c.Request.Context(), "Confirm your password")), form))
}

// sudoConfirm: POST /sudo confirms and returns to next.
func (h *Handler) sudoConfirm(c *gin.Context) {
	next := safeNext(c.PostForm("next"))
	if msg := h.confirmPassword(c, c.PostForm(sudoFieldName)); msg != "" {
		h.render(c, http.StatusUnauthorized, templates.SudoPage(h.page(c, i18n.T(c.Request.Context(), "Confirm your password")), templates.SudoForm{Next: next, Error: msg}))
		return
	}
	h.seeOther(c, next)
}

// apiSudo: POST /api/v1/sudo {"password": "…"} for scripts that use the
// browser session (the portal's own pages post forms instead).
func (h *Handler) apiSudo(c *gin.Context) {
	var body struct {
		Password string `json:"password"`
	}
	if !h.bindJSON(c, &body) {
		return
	}
	if c.GetBool(ctxBearerKey) {
		// Tokens need no confirmation, and this checks no password for
		// them: a 204 read as "the password is right" to a script.
		h.fail(c, newError(http.StatusBadRequest, "not_for_tokens",
			"an API token needs no sudo confirmation (its calls are confirmed already), so no password is checked here; POST /api/v1/sudo is for scripts that use a browser session"))
		return
	}
	if currentUser(c).SSO() && h.oidc != nil {
		h.fail(c, newError(http.StatusConflict, "sso_account",
			"this account has no password: use an API token for these calls (signing in again at /sudo confirms for the portal's pages only)"))
		return
	}
	if msg := h.confirmPassword(c, body.Password); msg != "" {
		h.fail(c, ownPasswordError(c, msg))
		return
	}
	h.sessions.Put(c.Request.Context(), sessionAPISudoKey, time.Now().Unix())
	c.Status(http.StatusNoContent)
}

// sudoSSO offers an account without a password (made by single sign-on)
// to confirm at the provider instead, coming back to next.
func (h *Handler) sudoSSO(c *gin.Context, f *templates.SudoForm, next string) {
	if h.oidc == nil || !currentUser(c).SSO() {
		return
	}
	f.SSOURL = "/login/oidc?sudo=1&next=" + url.QueryEscape(safeNext(next))
	f.SSOLabel = h.oidc.cfg.Label
}

// refererPath is the same-origin page the request came from, or "/".
func refererPath(c *gin.Context) string {
	u, err := url.Parse(c.Request.Referer())
	if err != nil || u.Host != c.Request.Host {
		return "/"
	}
	return safeNext(u.RequestURI())
}

// sudoFieldLabels name the admin forms' fields as the forms label them,
// for the confirm page (it listed "run_as_user", "expires_days").
var sudoFieldLabels = map[string]string{
	"name": i18n.Key("Name"), "image": i18n.Key("Image reference"), "description": i18n.Key("Description"),
	"start_command": i18n.Key("Start command"), "run_as_user": i18n.Key("Run as user"), "home_path": i18n.Key("Home path"),
	"open_path": i18n.Key("Open path"), "extra_ports": i18n.Key("Extra ports"), "gpu_model": i18n.Key("GPU model"),
	"gpu_count": i18n.Key("GPU count"), "cpu_cores": i18n.Key("CPU cores"), "memory_gib": i18n.Key("Memory (GiB)"),
	"username": i18n.Key("Username"), "email": i18n.Key("Email"), "role": i18n.Key("Role"), "tags": i18n.Key("Tags"),
	"enabled": i18n.Key("Enabled"), "reason": i18n.Key("Reason"), "user": i18n.Key("User"), "amount": i18n.Key("Amount"),
	"group": i18n.Key("Group"), "groups": i18n.Key("Groups"), "priority": i18n.Key("Priority"), "mig_profile": i18n.Key("MIG profile"),
	// The quota console's and the token form's fields, as their forms
	// label them (the page read "Max gpus" and "Expires days").
	"max_gpus": i18n.Key("GPUs at once"), "max_workbenches": i18n.Key("Workbenches"),
	"gpu_hours_per_month": i18n.Key("GPU-hours / month"), "max_runtime_hours": i18n.Key("Max runtime (h)"),
	"min_idle_minutes": i18n.Key("Idle timeout ≥ (min)"), "max_idle_minutes": i18n.Key("Idle timeout ≤ (min)"),
	"max_storage_gib": i18n.Key("Home storage (GiB)"),
	"allowed_images":  i18n.Key("Images (comma-separated)"), "allowed_flavors": i18n.Key("Flavors (comma-separated)"),
	"expires_days": i18n.Key("Expires in"),
	// The SSH key form (a key is added after the password is confirmed).
	"public_key": i18n.Key("Public key"),
}

// sudoUnshownFields are a form's bookkeeping, not part of the change: the
// quota row's version (a hash to the reader), where to return to.
var sudoUnshownFields = map[string]bool{"version": true, "back": true, "next": true}

// sudoValueWords are values the confirm page shows in the reader's words
// (a new user's role read "user" on a Chinese page).
var sudoValueWords = map[string]map[string]string{
	"role": {"user": i18n.Key("user"), "admin": i18n.Key("admin")},
}

// sudoFieldLabel is a form field's name as its form labels it, in the
// reader's language; a field without a label reads as words
// ("max_idle_minutes" → "Max idle minutes").
func sudoFieldLabel(lc context.Context, name string) string {
	if key, ok := sudoFieldLabels[name]; ok {
		return i18n.T(lc, key)
	}
	words := strings.ReplaceAll(name, "_", " ")
	if words == "" {
		return name
	}
	return strings.ToUpper(words[:1]) + words[1:]
}

// sudoShownValue is how the confirm page shows a field of the change being
// confirmed, so the user reads what their password will allow: secrets are
// left out (a new user's password), long values shortened (a public key).
func sudoShownValue(name, value string) (string, bool) {
	lower := strings.ToLower(name)
	if strings.Contains(lower, "password") || strings.Contains(lower, "secret") {
		return "", false
	}
	if r := []rune(value); len(r) > 80 {
		return string(r[:60]) + "…" + string(r[len(r)-12:]), true
	}
	return value, true
}
