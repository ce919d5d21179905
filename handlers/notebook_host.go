package handlers

import (
	"context"
	"crypto/rand"
	"errors"
	"fmt"
	"html"
	"net"
	"net/http"
	"net/url"
	"strings"
	"time"

	"workbench/handlers/proxy"
	"workbench/models"
	"workbench/orchestrator"
	"workbench/templates/i18n"
)

// Notebook domain (strong isolation). With Config.NotebookDomain set (say
// nb.example.org), workbench {id} is served at {scheme}://{id}.nb.example.org
// by this same binary, routed by Host. Each workbench is then its own
// origin: its script cannot read or drive the portal, nor another
// workbench, and the portal's session cookie (host-only on the portal's
// host) is never sent to it.
//
// Opening a workbench takes three hops, as an OAuth client's login does,
// so that the code can only be used by the browser that asked for it:
//
//  1. The portal's /wb/{id}/… (the "Open" link) checks the session and the
//     owner and sends the browser to {id}.<domain>/_workbench/start.
//  2. The notebook host sets a random state cookie on its own origin (or
//     keeps the one it has) and sends the browser back to the portal's
//     /_workbench/authorize with that state.
//  3. The portal checks session and owner again and mints a random code
//     bound to (user, workbench, portal session, hash of the state), valid
//     for notebookCodeTTL and usable once, and sends the browser to
//     {id}.<domain>/_workbench/open?code=…, which exchanges it for the
//     host's own cookie (NotebookCookieName) only if the browser brings the
//     state cookie the code was minted for.
//
// Without step 2 a user could stop at step 3 with a code for their own
// workbench and send the link to someone else, whose browser would sign
// into the sender's notebook (login CSRF: the victim types into a notebook
// the sender reads). The state cookie cannot be planted: it is host-only
// on the notebook host and random. Only SHA-256 hashes of code, state and
// cookie are stored. Logging out of the portal, a password reset and
// disabling the user end these sessions and close their connections.
//
// Jupyter keeps base_url /wb/{id}/ in both modes, so nothing about the
// container changes: the notebook host proxies /wb/{id}/… unchanged and
// redirects / to /wb/{id}/. That is the simplest design that is correct
// for both modes, and a workbench switches mode without a restart.
const (
	NotebookCookieName    = "workbench_nb"
	NotebookStateCookie   = "workbench_nb_state"
	NotebookAuthorizePath = "/_workbench/authorize" // on the portal's host
	notebookCodeTTL       = 60 * time.Second
	notebookStateTTL      = 15 * time.Minute // long enough to log in on the way
	notebookSessionTTL    = 12 * time.Hour
	notebookStartPath     = "/_workbench/start"
	notebookOpenPath      = "/_workbench/open"
	notebookMaxLabelLen   = 63 // one DNS label
)

// NotebookCookie is the notebook hosts' cookie name: over https with the
// __Host- prefix, so one notebook host cannot set it for its siblings
// through a shared parent domain.
func (h *Handler) NotebookCookie() string {
	return h.notebookCookieName(NotebookCookieName)
}

// NotebookStateCookie is the name of the notebook hosts' state cookie
// (see above), prefixed like NotebookCookie.
func (h *Handler) NotebookStateCookie() string {
	return h.notebookCookieName(NotebookStateCookie)
}

func (h *Handler) notebookCookieName(name string) string {
	if h.notebookSecure() {
		return "__Host-" + name
	}
	return name
}

func (h *Handler) notebookSecure() bool { return strings.HasPrefix(h.cfg.PublicURL, "https://") }

// NotebookHostID returns the workbench id of a notebook host name
// ({id}.<domain>[:port]), or false for any other host.
func (h *Handler) NotebookHostID(host string) (string, bool) {
	d := h.cfg.NotebookDomain
	if d == "" {
		return "", false
	}
	if hh, _, err := net.SplitHostPort(host); err == nil {
		host = hh
	}
	host = strings.ToLower(strings.TrimSuffix(host, "."))
	id, ok := strings.CutSuffix(host, "."+d)
	if !ok || !validWorkbenchLabel(id) {
		return "", false
	}
	return id, true
}

func validWorkbenchLabel(id string) bool {
	if id == "" || len(id) > notebookMaxLabelLen {
		return false
	}
	for i := 0; i < len(id); i++ {
		c := id[i]
		if !('a' <= c && c <= 'z' || '0' <= c && c <= '9' || c == '-') {
			return false
		}
	}
	return true
}

// NotebookOrigin is scheme://{id}.<domain>[:port], scheme and port taken
// from the portal's public URL.
func (h *Handler) NotebookOrigin(id string) string {
	u, err := url.Parse(h.cfg.PublicURL)
	if err != nil || u.Scheme == "" {
		u = &url.URL{Scheme: "http"}
	}
	host := id + "." + h.cfg.NotebookDomain
	if p := u.Port(); p != "" {
		host = net.JoinHostPort(host, p)
	}
	return u.Scheme + "://" + host
}

// NotebookOpen serves /wb/{id}/… on the portal's host when the notebook
// domain is set (step 1 above): it checks that the caller owns a running
// workbench id and sends the browser to the workbench's own origin, which
// starts the code exchange. It runs inside the session middleware.
func (h *Handler) NotebookOpen(w http.ResponseWriter, r *http.Request) {
	if r.Method != http.MethodGet && r.Method != http.MethodHead {
		lc := notebookLocale(r)
		w.Header().Set("Allow", "GET, HEAD")
		notebookPage(lc, w, http.StatusMethodNotAllowed, i18n.T(lc, "Not here"), i18n.T(lc, "Workbenches are served on their own address; open this one from the portal."), "")
		return
	}
	target := r.URL.Path
	if strings.Count(target, "/") == 2 { // /wb/{id}
		target += "/"
	}
	if r.URL.RawQuery != "" {
		target += "?" + r.URL.RawQuery
	}
	id, _, ok := h.notebookOwned(w, r, target)
	if !ok {
		return
	}
	w.Header().Set("Cache-Control", "no-store")
	http.Redirect(w, r, h.NotebookOrigin(id)+notebookStartPath+"?"+url.Values{"path": {target}}.Encode(), http.StatusSeeOther)
}

// NotebookAuthorize serves /_workbench/authorize on the portal's host (step
// 3 above): for the owner of a running workbench it mints a code bound to
// the state the notebook host set in this browser and sends the browser
// back there. It runs inside the session middleware.
func (h *Handler) NotebookAuthorize(w http.ResponseWriter, r *http.Request) {
	if !notebookStep(w, r) {
		return
	}
	q := r.URL.Query()
	state := q.Get("state")
	if !validNotebookState(state) {
		lc := notebookLocale(r)
		notebookPage(lc, w, http.StatusBadRequest, i18n.T(lc, "Link expired"),
			i18n.T(lc, "This link to the workbench has expired or was already used. Open the workbench again from the portal."), "")
		return
	}
	target := q.Get("path")
	id, u, ok := h.notebookOwned(w, r, target)
	if !ok {
		return
	}
	ctx := r.Context()
	code, err := h.store.CreateNotebookCode(ctx, u.ID, id, models.HashSecret(h.sessions.Token(ctx)), models.HashSecret(state), notebookCodeTTL)
	if err != nil {
		h.log.Error("notebook code", "workbench", id, "err", err)
		lc := notebookLocale(r)
		notebookPage(lc, w, http.StatusInternalServerError, i18n.T(lc, "Internal error"), i18n.T(lc, "Could not open the workbench."), "")
		return
	}
	http.Redirect(w, r, h.NotebookOrigin(id)+notebookOpenPath+"?"+url.Values{"code": {code}, "path": {target}}.Encode(), http.StatusSeeOther)
}

// notebookOwned checks that target is /wb/{id}/… of a running workbench
// the session's user owns, and returns id and the user; otherwise it has
// answered (the login page, the workbench's page while it is not running,
// or 404).
func (h *Handler) notebookOwned(w http.ResponseWriter, r *http.Request, target string) (string, *models.User, bool) {
	ctx := r.Context()
	u := h.SessionUser(ctx)
	id, _, _ := strings.Cut(strings.TrimPrefix(target, "/wb/"), "/")
	if !strings.HasPrefix(target, "/wb/"+id+"/") || !validWorkbenchLabel(id) {
		// On the portal's host: its own not-found page, as in path mode.
		h.notFoundPage(w, r, u)
		return "", nil, false
	}
	lc := i18n.WithLocale(ctx, requestLocale(r, u))
	if u == nil {
		http.Redirect(w, r, "/login?next="+url.QueryEscape(safeNext(r.URL.RequestURI())), http.StatusSeeOther)
		return "", nil, false
	}
	_, err := h.wbs.ProxyTarget(ctx, id, u.ID)
	switch {
	case errors.Is(err, orchestrator.ErrNoWorkbench):
		h.notFoundPage(w, r, u)
		return "", nil, false
	case errors.Is(err, orchestrator.ErrNotRunning):
		http.Redirect(w, r, "/workbenches/"+id, http.StatusSeeOther)
		return "", nil, false
	case err != nil:
		h.log.Error("notebook open", "workbench", id, "err", err)
		notebookPage(lc, w, http.StatusInternalServerError, i18n.T(lc, "Internal error"), i18n.T(lc, "Could not look up the workbench."), "")
		return "", nil, false
	}
	return id, u, true
}

// NotebookHost serves a notebook host {id}.<domain>: the code exchange,
// / → /wb/{id}/, and /wb/{id}/… through px (whose Resolve is
// NotebookResolve). Nothing of the portal is reachable here.
func (h *Handler) NotebookHost(px http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		id, _ := h.NotebookHostID(r.Host)
		switch {
		case r.URL.Path == notebookStartPath:
			h.notebookStart(w, r, id)
		case r.URL.Path == notebookOpenPath:
			h.notebookExchange(w, r, id)
		case r.URL.Path == "/":
			http.Redirect(w, r, "/wb/"+id+"/", http.StatusFound)
		case strings.HasPrefix(r.URL.Path, "/wb/"):
			px.ServeHTTP(w, r)
		default:
			lc := notebookLocale(r)
			notebookPage(lc, w, http.StatusNotFound, i18n.T(lc, "Not found"), i18n.T(lc, "Nothing here."), "")
		}
	})
}

// notebookStart (step 2 above) gives this browser a state cookie on the
// notebook host, keeping one it already has so that two tabs opened at
// once both succeed, and sends it to the portal to be authorized.
func (h *Handler) notebookStart(w http.ResponseWriter, r *http.Request, id string) {
	if !notebookStep(w, r) {
		return
	}
	state, ok := proxy.CookieValue(r, h.NotebookStateCookie())
	if !ok || !validNotebookState(state) {
		state = rand.Text()
	}
	http.SetCookie(w, &http.Cookie{Name: h.NotebookStateCookie(), Value: state, Path: "/",
		MaxAge: int(notebookStateTTL / time.Second), HttpOnly: true, Secure: h.notebookSecure(), SameSite: http.SameSiteLaxMode})
	target := r.URL.Query().Get("path")
	if !strings.HasPrefix(target, "/wb/"+id+"/") {
		target = "/wb/" + id + "/"
	}
	q := url.Values{"path": {target}, "state": {state}}
	http.Redirect(w, r, strings.TrimSuffix(h.cfg.PublicURL, "/")+NotebookAuthorizePath+"?"+q.Encode(), http.StatusSeeOther)
}

// notebookStep readies the answer of a step of the code exchange: never
// cached, no Referer onward (its URL carries a code or a state), GET only
// (false: it has answered 405).
func notebookStep(w http.ResponseWriter, r *http.Request) bool {
	w.Header().Set("Cache-Control", "no-store")
	w.Header().Set("Referrer-Policy", "no-referrer")
	if r.Method != http.MethodGet {
		lc := notebookLocale(r)
		w.Header().Set("Allow", "GET")
		notebookPage(lc, w, http.StatusMethodNotAllowed, i18n.T(lc, "Method not allowed"), "", "")
		return false
	}
	return true
}

// validNotebookState: what rand.Text makes (26 base32 characters), so that
// a state is never empty or chosen short.
func validNotebookState(s string) bool {
	if len(s) != 26 {
		return false
	}
	for i := 0; i < len(s); i++ {
		if c := s[i]; !('A' <= c && c <= 'Z' || '2' <= c && c <= '7') {
			return false
		}
	}
	return true
}

// notebookExchange turns a one-time code into this host's own cookie, for
// the browser holding the state cookie the code was minted for.
func (h *Handler) notebookExchange(w http.ResponseWriter, r *http.Request, id string) {
	if !notebookStep(w, r) {
		return
	}
	lc := notebookLocale(r)
	q := r.URL.Query()
	again := strings.TrimSuffix(h.cfg.PublicURL, "/") + "/workbenches/" + id
	stateHash := ""
	if state, ok := proxy.CookieValue(r, h.NotebookStateCookie()); ok && validNotebookState(state) {
		stateHash = models.HashSecret(state)
	}
	ns, token, err := h.store.ExchangeNotebookCode(r.Context(), q.Get("code"), id, stateHash, notebookSessionTTL)
	if errors.Is(err, models.ErrBadCode) {
		h.log.Info("notebook code refused", "workbench", id, "addr", r.RemoteAddr)
		notebookPage(lc, w, http.StatusForbidden, i18n.T(lc, "Link expired"),
			i18n.T(lc, "This link to the workbench has expired or was already used. Open the workbench again from the portal."), again)
		return
	}
	if err != nil {
		h.log.Error("notebook code exchange", "workbench", id, "err", err)
		notebookPage(lc, w, http.StatusInternalServerError, i18n.T(lc, "Internal error"), i18n.T(lc, "Could not open the workbench."), "")
		return
	}
	http.SetCookie(w, &http.Cookie{Name: h.NotebookCookie(), Value: token, Path: "/", HttpOnly: true,
		Secure: h.notebookSecure(), SameSite: http.SameSiteLaxMode})
	h.log.Info("notebook opened", "workbench", id, "user_id", ns.UserID)
	target := q.Get("path")
	if !strings.HasPrefix(target, "/wb/"+id+"/") || strings.ContainsAny(target, "\\\r\n\t") {
		target = "/wb/" + id + "/"
	}
	http.Redirect(w, r, target, http.StatusSeeOther)
}

// NotebookResolve authenticates a request on a notebook host by that
// host's cookie; the session opens only its own workbench, and only while
// its user owns it and is enabled.
func (h *Handler) NotebookResolve(r *http.Request, id string) (proxy.Target, error) {
	if hostID, ok := h.NotebookHostID(r.Host); !ok || hostID != id {
		return proxy.Target{}, proxy.ErrNotFound
	}
	// No session on this host (never opened here, the browser restarted,
	// it expired or was ended): ErrSignIn, so that a person's browser goes
	// through the opening hops (NotebookSignIn) rather than reading that
	// the workbench does not exist; anything else still gets 404.
	token, ok := proxy.CookieValue(r, h.NotebookCookie())
	if !ok {
		return proxy.Target{}, proxy.ErrSignIn
	}
	ctx := r.Context()
	now := time.Now()
	key := "nb:" + token
	e, ok := h.proxyAuth.get(key, now)
	if !ok {
		ns, err := h.store.NotebookSessionByToken(ctx, token)
		if errors.Is(err, models.ErrNotFound) {
			return proxy.Target{}, proxy.ErrSignIn
		}
		if err != nil {
			return proxy.Target{}, err
		}
		u, err := h.store.UserByID(ctx, ns.UserID)
		if err != nil || u.Disabled {
			return proxy.Target{}, proxy.ErrNotFound
		}
		e = proxyAuthEntry{userID: u.ID, grant: ns.PortalSessionHash, wbID: ns.WorkbenchID}
		h.proxyAuth.put(key, e, now)
	}
	if e.wbID != id {
		return proxy.Target{}, proxy.ErrNotFound
	}
	if port, prefix, ok := extraPortPath(r, id); ok {
		return h.portTarget(r, id, e, port, prefix)
	}
	return h.proxyTarget(r, id, e)
}

// NotebookSignIn is the notebook proxy's Options.SignIn: a browser that
// navigates to a notebook host without a session there (a bookmark, a tab
// restored after a restart) starts the opening hops for the page it asked
// for, as the portal's Open link does; the portal then asks it to sign in
// if needed and checks that it owns the workbench.
func (h *Handler) NotebookSignIn(w http.ResponseWriter, r *http.Request) {
	w.Header().Set("Cache-Control", "no-store")
	http.Redirect(w, r, notebookStartPath+"?"+url.Values{"path": {r.URL.RequestURI()}}.Encode(), http.StatusSeeOther)
}

// notebookLocale is r's context in the reader's language: their language
// cookie, else Accept-Language (on a notebook host the portal's session
// is not available, so neither is the user's saved preference).
func notebookLocale(r *http.Request) context.Context {
	return i18n.WithLocale(r.Context(), requestLocale(r, nil))
}

// notebookPage is a minimal page for the notebook host and the open step
// (the portal's layout and its session are not available there), in lc's
// language: title and msg come translated.
func notebookPage(lc context.Context, w http.ResponseWriter, status int, title, msg, link string) {
	lang := i18n.FromContext(lc).Lang()
	w.Header().Set("Content-Type", "text/html; charset=utf-8")
	w.Header().Set("Content-Language", lang)
	w.WriteHeader(status)
	a := ""
	if link != "" {
		a = fmt.Sprintf(`<p><a href="%s" data-testid="notebook-again">%s</a></p>`, html.EscapeString(link), html.EscapeString(i18n.T(lc, "Back to the portal")))
	}
	fmt.Fprintf(w, "<!doctype html><html lang=\"%s\"><head><meta charset=\"utf-8\"><title>%s</title></head><body><h1>%s</h1><p data-testid=\"notebook-message\">%s</p>%s</body></html>\n",
		html.EscapeString(lang), html.EscapeString(title), html.EscapeString(title), html.EscapeString(msg), a)
}
