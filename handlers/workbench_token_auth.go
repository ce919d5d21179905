package handlers

import (
	"errors"
	"net/http"
	"time"

	"workbench/handlers/proxy"
	"workbench/models"
)

// workbenchTokenGrant is the grant (see proxy.Live) of requests made with a
// workbench token: revoking the token ends them.
func workbenchTokenGrant(tokenHash string) string { return "wbk:" + tokenHash }

// scopedTokenUser authenticates a proxied request by a workbench-scoped
// token for workbench id. A token of another workbench, an unknown,
// revoked or expired one and one of a disabled user are all refused alike
// (proxy.ErrBadToken, whether id exists or not), so ids cannot be probed.
func (h *Handler) scopedTokenUser(r *http.Request, secret, id string) (proxyAuthEntry, error) {
	key := "wbk:" + secret
	now := time.Now()
	if e, ok := h.proxyAuth.get(key, now); ok {
		if e.wbID != id {
			return proxyAuthEntry{}, proxy.ErrBadToken
		}
		return e, nil
	}
	u, err := h.store.WorkbenchTokenUser(r.Context(), secret, id)
	if errors.Is(err, models.ErrBadWorkbenchToken) {
		h.log.Info("proxy: workbench token refused", "workbench", id, "addr", r.RemoteAddr)
		return proxyAuthEntry{}, proxy.ErrBadToken
	}
	if err != nil {
		return proxyAuthEntry{}, err
	}
	e := proxyAuthEntry{userID: u.ID, grant: workbenchTokenGrant(models.HashSecret(secret)), wbID: id}
	h.proxyAuth.put(key, e, now)
	return e, nil
}
