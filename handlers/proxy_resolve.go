package handlers

import (
	"errors"
	"net/http"
	"net/url"
	"time"

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
	userID, ok := h.proxyAuth.get(ck.Value, now)
	if !ok {
		sctx, err := h.sessions.Load(ctx, ck.Value)
		if err != nil {
			return proxy.Target{}, err
		}
		u := h.SessionUser(sctx)
		if u == nil {
			return proxy.Target{}, proxy.ErrNotFound
		}
		userID = u.ID
		h.proxyAuth.put(ck.Value, userID, now)
	}
	t, err := h.wbs.ProxyTarget(ctx, id, userID)
	switch {
	case errors.Is(err, orchestrator.ErrNoWorkbench):
		return proxy.Target{}, proxy.ErrNotFound
	case errors.Is(err, orchestrator.ErrNotRunning):
		return proxy.Target{}, proxy.ErrNotReady
	case err != nil:
		return proxy.Target{}, err
	}
	return proxy.Target{BaseURL: &url.URL{Scheme: "http", Host: t.Endpoint}, Token: t.Token}, nil
}
