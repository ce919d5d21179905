package handlers

import (
	"errors"
	"net/http"
	"net/url"
	"strings"
	"time"

	"workbench/handlers/proxy"
	"workbench/models"
	"workbench/orchestrator"
)

// ProxyResolve authenticates a proxied request by the portal session and
// returns the caller's own running workbench. The session is loaded
// read-only: proxied responses never carry the portal's Set-Cookie, and
// notebook traffic does not write to the session store.
//
// A request carrying a workbench-scoped token is authenticated by that
// token alone, never by the cookie beside it: the proxy skips its CSRF
// check for such requests (see proxy.ScopedToken).
func (h *Handler) ProxyResolve(r *http.Request, id string) (proxy.Target, error) {
	var e proxyAuthEntry
	var err error
	if secret, ok := proxy.ScopedToken(r, models.WorkbenchTokenPrefix); ok {
		e, err = h.scopedTokenUser(r, secret, id)
	} else {
		e, err = h.proxyUser(r)
		if errors.Is(err, proxy.ErrSignIn) {
			if _, api := proxy.ScopedToken(r, models.TokenPrefix); api {
				err = proxy.ErrAPIToken
			}
		}
	}
	if err != nil {
		return proxy.Target{}, err
	}
	if port, prefix, ok := extraPortPath(r, id); ok {
		return h.portTarget(r, id, e, port, prefix)
	}
	return h.proxyTarget(r, id, e)
}

// proxyTarget finds the running workbench id of the authenticated user.
func (h *Handler) proxyTarget(r *http.Request, id string, e proxyAuthEntry) (proxy.Target, error) {
	t, err := h.wbs.ProxyTarget(r.Context(), id, e.userID)
	switch {
	case errors.Is(err, orchestrator.ErrNoWorkbench):
		return proxy.Target{}, e.noWorkbench()
	case errors.Is(err, orchestrator.ErrPaused):
		return proxy.Target{}, proxy.ErrPaused
	case errors.Is(err, orchestrator.ErrNotRunning):
		return proxy.Target{}, proxy.ErrNotReady
	case err != nil:
		return proxy.Target{}, err
	}
	return proxy.Target{BaseURL: &url.URL{Scheme: "http", Host: t.Endpoint}, Token: t.Token, UserID: e.userID, Grant: e.grant}, nil
}

// noWorkbench is the refusal when the workbench is not found. A workbench
// token's workbench can vanish within the auth cache's TTL: its deletion
// revoked the token, so it is refused as any revoked token is (403, what an
// IDE client acts on), not as a missing workbench.
func (e proxyAuthEntry) noWorkbench() error {
	if strings.HasPrefix(e.grant, workbenchTokenGrant("")) {
		return proxy.ErrBadToken
	}
	return proxy.ErrNotFound
}

// proxyUser is the user (and the session grant) whose portal session the
// proxied request carries (proxy.ErrSignIn without one), cached briefly
// for the proxy's hot path.
func (h *Handler) proxyUser(r *http.Request) (proxyAuthEntry, error) {
	token, ok := proxy.CookieValue(r, h.sessions.Cookie.Name)
	if !ok {
		return proxyAuthEntry{}, proxy.ErrSignIn
	}
	now := time.Now()
	if e, ok := h.proxyAuth.get(token, now); ok {
		return e, nil
	}
	sctx, err := h.sessions.Load(r.Context(), token)
	if err != nil {
		return proxyAuthEntry{}, err
	}
	u := h.SessionUser(sctx)
	if u == nil {
		return proxyAuthEntry{}, proxy.ErrSignIn // signed out or expired
	}
	e := proxyAuthEntry{userID: u.ID, grant: models.HashSecret(token)}
	h.proxyAuth.put(token, e, now)
	return e, nil
}
