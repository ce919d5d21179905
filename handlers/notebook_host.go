package handlers

import (
	"context"
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
// Opening a workbench: the portal's /wb/{id}/… (the "Open" link) checks the
// session and the owner, then sends the browser to
// {id}.<domain>/_workbench/open?code=…&path=/wb/{id}/…, with a random code
// bound to (user, workbench, portal session), valid for notebookCodeTTL and
// usable once. The notebook host exchanges it for its own host-only cookie
// (NotebookCookieName); only SHA-256 hashes of code and cookie are stored.
// Logging out of the portal, a password reset and disabling the user end
// these sessions and close their connections.
//
// Jupyter keeps base_url /wb/{id}/ in both modes, so nothing about the
// container changes: the notebook host proxies /wb/{id}/… unchanged and
// redirects / to /wb/{id}/. That is the simplest design that is correct
// for both modes, and a workbench switches mode without a restart.
const (
	NotebookCookieName  = "workbench_nb"
	notebookCodeTTL     = 60 * time.Second
	notebookSessionTTL  = 12 * time.Hour
	notebookOpenPath    = "/_workbench/open"
	notebookMaxLabelLen = 63 // one DNS label
)

// NotebookCookie is the notebook hosts' cookie name: over https with the
// __Host- prefix, so one notebook host cannot set it for its siblings
// through a shared parent domain.
func (h *Handler) NotebookCookie() string {
	if strings.HasPrefix(h.cfg.PublicURL, "https://") {
		return "__Host-" + NotebookCookieName
	}
	return NotebookCookieName
}

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
// domain is set: it hands the owner a one-time code and sends the browser
// to the workbench's own origin. It runs inside the session middleware.
func (h *Handler) NotebookOpen(w http.ResponseWriter, r *http.Request) {
	if r.Method != http.MethodGet && r.Method != http.MethodHead {
		lc := notebookLocale(r)
		w.Header().Set("Allow", "GET, HEAD")
		notebookPage(lc, w, http.StatusMethodNotAllowed, i18n.T(lc, "Not here"), i18n.T(lc, "Workbenches are served on their own address; open this one from the portal."), "")
		return
	}
	id, rest, _ := strings.Cut(strings.TrimPrefix(r.URL.Path, "/wb/"), "/")
	if !validWorkbenchLabel(id) {
		lc := notebookLocale(r)
		notebookPage(lc, w, http.StatusNotFound, i18n.T(lc, "Not found"), i18n.T(lc, "There is no such workbench."), "")
		return
	}
	ctx := r.Context()
	u := h.SessionUser(ctx)
	lc := i18n.WithLocale(ctx, requestLocale(r, u))
	if u == nil {
		http.Redirect(w, r, "/login?next="+url.QueryEscape(safeNext(r.URL.RequestURI())), http.StatusSeeOther)
		return
	}
	_, err := h.wbs.ProxyTarget(ctx, id, u.ID)
	switch {
	case errors.Is(err, orchestrator.ErrNoWorkbench):
		notebookPage(lc, w, http.StatusNotFound, i18n.T(lc, "Not found"), i18n.T(lc, "There is no such workbench."), "")
		return
	case errors.Is(err, orchestrator.ErrNotRunning):
		http.Redirect(w, r, "/workbenches/"+id, http.StatusSeeOther)
		return
	case err != nil:
		h.log.Error("notebook open", "workbench", id, "err", err)
		notebookPage(lc, w, http.StatusInternalServerError, i18n.T(lc, "Internal error"), i18n.T(lc, "Could not look up the workbench."), "")
		return
	}
	code, err := h.store.CreateNotebookCode(ctx, u.ID, id, models.HashSecret(h.sessions.Token(ctx)), notebookCodeTTL)
	if err != nil {
		h.log.Error("notebook code", "workbench", id, "err", err)
		notebookPage(lc, w, http.StatusInternalServerError, i18n.T(lc, "Internal error"), i18n.T(lc, "Could not open the workbench."), "")
		return
	}
	target := "/wb/" + id + "/" + rest
	if r.URL.RawQuery != "" {
		target += "?" + r.URL.RawQuery
	}
	q := url.Values{"code": {code}, "path": {target}}
	w.Header().Set("Cache-Control", "no-store")
	w.Header().Set("Referrer-Policy", "no-referrer")
	http.Redirect(w, r, h.NotebookOrigin(id)+notebookOpenPath+"?"+q.Encode(), http.StatusSeeOther)
}

// NotebookHost serves a notebook host {id}.<domain>: the code exchange,
// / → /wb/{id}/, and /wb/{id}/… through px (whose Resolve is
// NotebookResolve). Nothing of the portal is reachable here.
func (h *Handler) NotebookHost(px http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		id, _ := h.NotebookHostID(r.Host)
		switch {
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

// notebookExchange turns a one-time code into this host's own cookie.
func (h *Handler) notebookExchange(w http.ResponseWriter, r *http.Request, id string) {
	w.Header().Set("Cache-Control", "no-store")
	w.Header().Set("Referrer-Policy", "no-referrer")
	lc := notebookLocale(r)
	if r.Method != http.MethodGet {
		w.Header().Set("Allow", "GET")
		notebookPage(lc, w, http.StatusMethodNotAllowed, i18n.T(lc, "Method not allowed"), "", "")
		return
	}
	q := r.URL.Query()
	again := strings.TrimSuffix(h.cfg.PublicURL, "/") + "/workbenches/" + id
	ns, token, err := h.store.ExchangeNotebookCode(r.Context(), q.Get("code"), id, notebookSessionTTL)
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
		Secure: strings.HasPrefix(h.cfg.PublicURL, "https://"), SameSite: http.SameSiteLaxMode})
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
	token, ok := proxy.CookieValue(r, h.NotebookCookie())
	if !ok {
		return proxy.Target{}, proxy.ErrNotFound
	}
	ctx := r.Context()
	now := time.Now()
	key := "nb:" + token
	e, ok := h.proxyAuth.get(key, now)
	if !ok {
		ns, err := h.store.NotebookSessionByToken(ctx, token)
		if errors.Is(err, models.ErrNotFound) {
			return proxy.Target{}, proxy.ErrNotFound
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
