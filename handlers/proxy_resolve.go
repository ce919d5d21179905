package handlers

import (
	"errors"
	"net/http"
	"net/url"
	"time"

	"workbench/models"
	"workbench/orchestrator"
	"workbench/web/proxy"
)

// ProxyResolve authenticates a proxied request by the portal session and
// returns the caller's own running workbench. The session is loaded
// read-only: proxied responses never carry the portal's Set-Cookie, and
// notebook traffic does not write to the session store.
func (h *Handler) ProxyResolve(r *http.Request, id string) (proxy.Target, error) {
	ck, err := r.Cookie(h.sessions.Cookie.Name)
	if err != nil {
		return proxy.Target{}, proxy.ErrNotFound
	}
	ctx := r.Context()
	now := time.Now()
	e, ok := h.proxyAuth.get(ck.Value, now)
	if !ok {
		sctx, err := h.sessions.Load(ctx, ck.Value)
		if err != nil {
			return proxy.Target{}, err
		}
		u := h.SessionUser(sctx)
		if u == nil {
			return proxy.Target{}, proxy.ErrNotFound
		}
		e = proxyAuthEntry{userID: u.ID, grant: models.HashSecret(ck.Value)}
		h.proxyAuth.put(ck.Value, e, now)
	}
	return h.proxyTarget(r, id, e)
}

// proxyTarget finds the running workbench id of the authenticated user.
func (h *Handler) proxyTarget(r *http.Request, id string, e proxyAuthEntry) (proxy.Target, error) {
	t, err := h.wbs.ProxyTarget(r.Context(), id, e.userID)
	switch {
	case errors.Is(err, orchestrator.ErrNoWorkbench):
		return proxy.Target{}, proxy.ErrNotFound
	case errors.Is(err, orchestrator.ErrNotRunning):
		return proxy.Target{}, proxy.ErrNotReady
	case err != nil:
		return proxy.Target{}, err
	}
	return proxy.Target{BaseURL: &url.URL{Scheme: "http", Host: t.Endpoint}, Token: t.Token, UserID: e.userID, Grant: e.grant}, nil
}
