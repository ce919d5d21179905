package handlers

import (
	"errors"
	"net/http"
	"strconv"
	"strings"
	"time"

	"github.com/gin-gonic/gin"

	"workbench/models"
	"workbench/templates"
	"workbench/templates/i18n"
)

// Workbench tokens: created on the workbench page (owner only, after a
// password confirmation like API tokens, CSRF-checked like every form),
// shown once, stored hashed, revocable and expiring. The proxy accepts
// them for that workbench only (workbench_token_auth.go).

const wbTokenSecretKey = "new_wb_token_secret" // session: "<workbench id> <secret>"

func (h *Handler) workbenchTokensView(c *gin.Context, wb *models.Workbench, v templates.WorkbenchTokensView) (templates.WorkbenchTokensView, error) {
	ctx := c.Request.Context()
	v.WorkbenchID = wb.ID
	v.ServerURL = h.workbenchServerURL(c, wb.ID)
	if v.NewSecret == "" {
		// Shown once: popped from the server-side session, never in a URL.
		if s := h.sessions.GetString(ctx, wbTokenSecretKey); s != "" {
			if id, secret, _ := strings.Cut(s, " "); id == wb.ID {
				v.NewSecret = secret
				h.sessions.Remove(ctx, wbTokenSecretKey)
			}
		}
	}
	toks, err := h.store.ListWorkbenchTokens(ctx, currentUser(c).ID, wb.ID)
	if err != nil {
		return v, err
	}
	now := time.Now()
	for _, t := range toks {
		row := templates.TokenRow{ID: t.ID, Name: t.Name, Prefix: t.Prefix, Created: templates.WhenIn(c.Request.Context(), &t.CreatedAt),
			Expires: templates.WhenIn(c.Request.Context(), t.ExpiresAt), LastUsed: templates.WhenIn(c.Request.Context(), t.LastUsedAt), Status: "active"}
		switch {
		case t.RevokedAt != nil:
			row.Status = "revoked"
		case !t.Active(now):
			row.Status = "expired"
		}
		v.Tokens = append(v.Tokens, row)
	}
	return v, nil
}

// workbenchServerURL is the Jupyter server URL a client is given: the
// portal's path-mode address of the workbench.
func (h *Handler) workbenchServerURL(c *gin.Context, id string) string {
	base := strings.TrimSuffix(h.cfg.PublicURL, "/")
	if base == "" {
		scheme := "http"
		if c.Request.TLS != nil {
			scheme = "https"
		}
		base = scheme + "://" + c.Request.Host
	}
	return base + "/wb/" + id + "/"
}

// workbenchTokenCreate: POST /workbenches/{id}/tokens (name, expires_days).
func (h *Handler) workbenchTokenCreate(c *gin.Context) {
	wb, ok := h.ownedWorkbench(c)
	if !ok {
		return
	}
	name := c.PostForm("name")
	ttl, err := parseTTLDays(c.DefaultPostForm("expires_days", "30"))
	var secret string
	if err == nil {
		_, secret, err = h.createWorkbenchToken(c, wb, name, ttl)
	}
	var ve *models.ValidationError
	if errors.As(err, &ve) {
		h.showWorkbench(c, wb, http.StatusBadRequest, templates.WorkbenchTokensView{Name: name, ExpiresDays: c.PostForm("expires_days"), Errors: templates.FormErrors{ve.Field: fieldMessage(c.Request.Context(), ve.Message)}})
		return
	}
	if err != nil {
		h.fail(c, err)
		return
	}
	h.sessions.Put(c.Request.Context(), wbTokenSecretKey, wb.ID+" "+secret)
	h.seeOther(c, "/workbenches/"+wb.ID+"#access-tokens")
}

// workbenchTokenRevoke: POST /workbenches/{id}/tokens/{tid}/revoke.
func (h *Handler) workbenchTokenRevoke(c *gin.Context) {
	wb, ok := h.ownedWorkbench(c)
	if !ok {
		return
	}
	if !h.revokeWorkbenchToken(c, wb) {
		return
	}
	h.flash(c, i18n.T(c.Request.Context(), "Token revoked."))
	h.seeOther(c, "/workbenches/"+wb.ID+"#access-tokens")
}

// revokeWorkbenchToken revokes the token and at once ends what it opened:
// cached proxy lookups and connections in flight (kernel WebSockets).
func (h *Handler) revokeWorkbenchToken(c *gin.Context, wb *models.Workbench) bool {
	id, _ := strconv.ParseInt(c.Param("tid"), 10, 64)
	var hash string
	err := h.audited(c, func(tx *models.Store) (models.AuditRecord, error) {
		var err error
		hash, err = tx.RevokeWorkbenchToken(c.Request.Context(), currentUser(c).ID, wb.ID, id)
		return auditRec("workbench_token.revoke", currentUser(c).Username, nil, map[string]any{"workbench": wb.ID, "token_id": id}), err
	})
	if err != nil {
		h.fail(c, err)
		return false
	}
	grant := workbenchTokenGrant(hash)
	h.proxyAuth.forgetGrant(grant)
	if closed := h.live.CloseGrant(grant); closed > 0 {
		h.log.Info("workbench token revoked", "workbench", wb.ID, "token_id", id, "connections_closed", closed)
	}
	return true
}

// apiWorkbenchTokens: GET /api/v1/workbenches/{id}/tokens.
func (h *Handler) apiWorkbenchTokens(c *gin.Context) {
	wb, ok := h.ownedWorkbench(c)
	if !ok {
		return
	}
	toks, err := h.store.ListWorkbenchTokens(c.Request.Context(), currentUser(c).ID, wb.ID)
	if err != nil {
		h.fail(c, err)
		return
	}
	c.JSON(http.StatusOK, gin.H{"items": nonNil(toks)})
}

// apiWorkbenchTokenCreate: POST /api/v1/workbenches/{id}/tokens
// {"name": "...", "expires_days": 30}; the secret is in the answer only.
func (h *Handler) apiWorkbenchTokenCreate(c *gin.Context) {
	wb, ok := h.ownedWorkbench(c)
	if !ok {
		return
	}
	var body struct {
		Name        string `json:"name"`
		ExpiresDays *int   `json:"expires_days"`
	}
	if !h.bindJSON(c, &body) {
		return
	}
	days := 30
	if body.ExpiresDays != nil {
		days = *body.ExpiresDays
	}
	ttl, err := parseTTLDays(strconv.Itoa(days))
	if err != nil {
		h.fail(c, err)
		return
	}
	if err := withinCallerToken(c, ttl, time.Now()); err != nil {
		h.fail(c, err)
		return
	}
	t, secret, err := h.createWorkbenchToken(c, wb, body.Name, ttl)
	if err != nil {
		h.fail(c, err)
		return
	}
	c.JSON(http.StatusCreated, gin.H{"token": secret, "item": t, "server_url": h.workbenchServerURL(c, wb.ID)})
}

// apiWorkbenchTokenRevoke: DELETE /api/v1/workbenches/{id}/tokens/{tid}.
func (h *Handler) apiWorkbenchTokenRevoke(c *gin.Context) {
	wb, ok := h.ownedWorkbench(c)
	if !ok {
		return
	}
	if h.revokeWorkbenchToken(c, wb) {
		c.Status(http.StatusNoContent)
	}
}

// createWorkbenchToken makes a token for the signed-in user's workbench with
// its audit row; the secret is returned once.
func (h *Handler) createWorkbenchToken(c *gin.Context, wb *models.Workbench, name string, ttl time.Duration) (*models.WorkbenchToken, string, error) {
	var t *models.WorkbenchToken
	var secret string
	err := h.audited(c, func(tx *models.Store) (models.AuditRecord, error) {
		var err error
		if t, secret, err = tx.CreateWorkbenchToken(c.Request.Context(), currentUser(c).ID, wb.ID, name, ttl); err != nil {
			return models.AuditRecord{}, err
		}
		return auditRec("workbench_token.create", currentUser(c).Username, nil, map[string]any{"workbench": wb.ID, "token_id": t.ID, "name": t.Name}), nil
	})
	return t, secret, err
}
