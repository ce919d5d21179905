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
	userID, err := h.proxyUser(r)
	if err != nil {
		return proxy.Target{}, err
	}
	t, err := h.wbs.ProxyTarget(r.Context(), id, userID)
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

// proxyUser is the id of the user whose portal session the proxied request
// carries (proxy.ErrNotFound without one).
func (h *Handler) proxyUser(r *http.Request) (int64, error) {
	ck, err := r.Cookie(h.sessions.Cookie.Name)
	if err != nil {
		return 0, proxy.ErrNotFound
	}
	now := time.Now()
	if userID, ok := h.proxyAuth.get(ck.Value, now); ok {
		return userID, nil
	}
	sctx, err := h.sessions.Load(r.Context(), ck.Value)
	if err != nil {
		return 0, err
	}
	u := h.SessionUser(sctx)
	if u == nil {
		return 0, proxy.ErrNotFound
	}
	h.proxyAuth.put(ck.Value, u.ID, now)
	return u.ID, nil
}
