package handlers

import (
	"context"
	"time"

	"github.com/gin-gonic/gin"

	"workbench/handlers/proxy"
	"workbench/models"
)

// Live is the registry of proxied requests in flight; the server hands it
// to the proxies so that revocation here ends them.
func (h *Handler) Live() *proxy.Live { return h.live }

// revokeUser ends all of a user's access at once: portal sessions (new
// auth epoch), API tokens, notebook-domain sessions, cached proxy
// lookups, their proxied connections in flight (WebSockets included) and
// their open SSH connections. why says what happened ("the account was
// disabled", "the password was reset"); each closed SSH connection is
// audited with it (ssh.connection.revoked).
func (h *Handler) revokeUser(c *gin.Context, u *models.User, why string) (models.Revoked, error) {
	ctx := c.Request.Context()
	// The revocation commits with its row; the connections it ends are
	// closed after it (they are not in the database), so the row counts
	// what was revoked, not the connections.
	var rev models.Revoked
	err := h.audited(c, func(tx *models.Store) (models.AuditRecord, error) {
		var err error
		rev, err = tx.RevokeUserAccess(ctx, u.ID)
		return auditRec("user.revoke_access", u.Username, nil, map[string]any{"tokens": rev.Tokens,
			"notebook_sessions": rev.NotebookSessions}), err
	})
	if err != nil {
		return rev, err
	}
	closed, sshClosed := h.endLiveAccess(c, u.ID, why)
	h.log.Info("access revoked", "user", u.Username, "tokens", rev.Tokens, "notebook_sessions", rev.NotebookSessions, "connections", closed, "ssh_connections", sshClosed)
	return rev, nil
}

// endLiveAccess ends what a revocation in the database cannot reach: the
// cached proxy lookups of user id, their proxied connections in flight
// (WebSockets included) and their open SSH connections (each audited with
// why). It returns how many connections it closed.
func (h *Handler) endLiveAccess(c *gin.Context, id int64, why string) (closed, sshClosed int) {
	h.proxyAuth.forgetUser(id, time.Now())
	closed = h.live.CloseUser(id)
	if h.closeSSH != nil {
		by := "system"
		if me := currentUser(c); me != nil {
			by = me.Username
		}
		sshClosed = h.closeSSH(id, by, why)
	}
	return closed, sshClosed
}

// stopWorkbenchesOf stops every workbench of a user whose account was
// disabled (homes are kept) with reason shown on each. It runs on its own
// context: the stop must not depend on the admin's request surviving.
func (h *Handler) stopWorkbenchesOf(u *models.User, reason string) {
	ctx := context.Background()
	wbs, err := h.store.ListWorkbenches(ctx, u.ID)
	if err != nil {
		h.log.Error("list workbenches to stop", "user", u.Username, "err", err)
		return
	}
	for _, wb := range wbs {
		switch wb.State {
		case models.StateStopped, models.StateFailed:
			continue
		}
		go func() {
			if err := h.wbs.Stop(ctx, wb.ID, reason); err != nil {
				h.log.Error("stop workbench of disabled user", "id", wb.ID, "user", u.Username, "err", err)
			}
		}()
	}
}

// endNotebookAccess ends what a portal session opened: its notebook-domain
// sessions and every proxied connection made with either. Logout calls it.
func (h *Handler) endNotebookAccess(c *gin.Context, portalSessionHash string) {
	n, err := h.store.DeleteNotebookSessionsOf(c.Request.Context(), portalSessionHash)
	if err != nil {
		h.log.Error("end notebook sessions", "err", err)
	}
	h.proxyAuth.forgetGrant(portalSessionHash)
	closed := h.live.CloseGrant(portalSessionHash)
	if u := currentUser(c); u != nil {
		h.record(c, "session.logout", u.Username, nil, map[string]int64{"notebook_sessions": n, "connections_closed": int64(closed)})
	}
}
