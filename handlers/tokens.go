package handlers

import (
	"errors"
	"fmt"
	"net/http"
	"strconv"
	"time"

	"github.com/gin-gonic/gin"

	"workbench/models"
	"workbench/templates"
	"workbench/templates/i18n"
)

const tokenSecretKey = "new_token_secret"

func (h *Handler) tokensPage(c *gin.Context) {
	h.renderTokens(c, http.StatusOK, templates.TokensView{NewSecret: h.sessions.PopString(c.Request.Context(), tokenSecretKey)})
}

func (h *Handler) renderTokens(c *gin.Context, status int, v templates.TokensView) {
	toks, err := h.store.ListTokens(c.Request.Context(), currentUser(c).ID)
	if err != nil {
		h.fail(c, err)
		return
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
	h.render(c, status, templates.TokensPage(h.page(c, i18n.T(c.Request.Context(), "API tokens")), v))
}

// parseTTLDays reads a token lifetime in days (0 = never expires).
func parseTTLDays(s string) (time.Duration, error) {
	days, err := strconv.Atoi(s)
	if err != nil || days < 0 || days > 3650 {
		return 0, &models.ValidationError{Field: "expires_days", Message: "choose a lifetime between 0 (never) and 3650 days"}
	}
	return time.Duration(days) * 24 * time.Hour, nil
}

func (h *Handler) tokenCreate(c *gin.Context) {
	name := c.PostForm("name")
	ttl, err := parseTTLDays(c.DefaultPostForm("expires_days", "30"))
	if err == nil {
		var secret string
		_, secret, err = h.createToken(c, name, ttl)
		if err == nil {
			// The secret travels to the next page in the server-side session,
			// never in a URL.
			h.sessions.Put(c.Request.Context(), tokenSecretKey, secret)
			h.seeOther(c, "/settings/tokens")
			return
		}
	}
	var ve *models.ValidationError
	if errors.As(err, &ve) {
		h.renderTokens(c, http.StatusBadRequest, templates.TokensView{Name: name, ExpiresDays: c.PostForm("expires_days"), Errors: templates.FormErrors{ve.Field: fieldMessage(c.Request.Context(), ve.Message)}})
		return
	}
	h.fail(c, err)
}

func (h *Handler) tokenRevoke(c *gin.Context) {
	ctx := c.Request.Context()
	id, _ := strconv.ParseInt(c.Param("id"), 10, 64)
	// Asked about one's own token not yet revoked: any other id gets the
	// revoke's answer (404) at once.
	toks, err := h.store.ListTokens(ctx, currentUser(c).ID)
	if err != nil {
		h.fail(c, err)
		return
	}
	for _, t := range toks {
		if t.ID == id && t.RevokedAt == nil &&
			!h.askedFirst(c, templates.ConfirmView{Question: i18n.T(ctx, "Revoke the token %s? Scripts that use it stop working at once.", t.Name),
				Yes: i18n.T(ctx, "Revoke"), Back: "/settings/tokens"}) {
			return
		}
	}
	if err := h.revokeToken(c, id); err != nil {
		h.fail(c, err)
		return
	}
	h.flash(c, i18n.T(c.Request.Context(), "Token revoked."))
	h.seeOther(c, "/settings/tokens")
}

func (h *Handler) apiTokens(c *gin.Context) {
	toks, err := h.store.ListTokens(c.Request.Context(), currentUser(c).ID)
	if err != nil {
		h.fail(c, err)
		return
	}
	c.JSON(http.StatusOK, mapList(toks, apiToken))
}

// apiTokenCreate: POST /api/v1/tokens {"name": "...", "expires_days": 30}.
func (h *Handler) apiTokenCreate(c *gin.Context) {
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
	t, secret, err := h.createToken(c, body.Name, ttl)
	if err != nil {
		h.fail(c, err)
		return
	}
	c.JSON(http.StatusCreated, APITokenCreated{Token: secret, Item: apiToken(t)})
}

func (h *Handler) apiTokenRevoke(c *gin.Context) {
	id, _ := strconv.ParseInt(c.Param("id"), 10, 64)
	if err := h.revokeToken(c, id); err != nil {
		h.fail(c, err)
		return
	}
	c.Status(http.StatusNoContent)
}

// revokeToken revokes one of the signed-in user's API tokens with its
// audit row.
// createToken makes an API token for the caller, audited as token.create
// with its name, prefix and expiry (never the secret): a new credential
// leaves a trace, as its revocation does.
func (h *Handler) createToken(c *gin.Context, name string, ttl time.Duration) (*models.APIToken, string, error) {
	var t *models.APIToken
	var secret string
	err := h.audited(c, func(tx *models.Store) (models.AuditRecord, error) {
		var err error
		if t, secret, err = tx.CreateToken(c.Request.Context(), currentUser(c).ID, name, ttl); err != nil {
			return models.AuditRecord{}, err
		}
		return auditRec("token.create", currentUser(c).Username, nil, map[string]any{"token_id": t.ID, "name": t.Name, "prefix": t.Prefix, "expires_at": t.ExpiresAt}), nil
	})
	return t, secret, err
}

func (h *Handler) revokeToken(c *gin.Context, id int64) error {
	ctx, me := c.Request.Context(), currentUser(c)
	var hash string
	err := h.audited(c, func(tx *models.Store) (models.AuditRecord, error) {
		var err error
		hash, err = tx.RevokeToken(ctx, me.ID, id)
		return auditRec("token.revoke", me.Username, nil, map[string]int64{"token_id": id}), err
	})
	if err == nil {
		h.live.CloseGrant(apiTokenGrant(hash)) // a log it follows, an event stream it opened
	}
	return err
}

// sshKeyWithinCallerToken refuses an SSH key (which never expires, and
// opens a shell in every workbench of its owner) to an API token that
// expires: a short-lived or revoked token must not leave a lasting
// credential behind, as withinCallerToken rules for tokens.
func sshKeyWithinCallerToken(c *gin.Context) error {
	exp, _ := c.Get(ctxBearerExpiresKey)
	callerExp, _ := exp.(*time.Time)
	if callerExp == nil {
		return nil
	}
	return newError(http.StatusForbidden, "token_outlives_caller", fmt.Sprintf(
		"the API token this request came with expires at %s, and an SSH key never expires, so this token cannot add one; add it on the portal's SSH keys page (/settings/ssh-keys) or with a token that does not expire",
		callerExp.UTC().Format(time.RFC3339)))
}

// withinCallerToken refuses a token of lifetime ttl (0: none) that would
// outlive the API token the request came with: a short-lived token handed
// to a script, or leaked, must not mint a lasting credential. A session
// (someone who typed the password) is not bounded this way.
func withinCallerToken(c *gin.Context, ttl time.Duration, now time.Time) error {
	exp, _ := c.Get(ctxBearerExpiresKey)
	callerExp, _ := exp.(*time.Time)
	if callerExp == nil || (ttl > 0 && !now.Add(ttl).After(*callerExp)) {
		return nil
	}
	most := "it expires in less than a day, so it cannot make one"
	if days := int(callerExp.Sub(now) / (24 * time.Hour)); days > 0 {
		most = fmt.Sprintf("expires_days may be at most %d", days)
	}
	return newError(http.StatusForbidden, "token_outlives_caller", fmt.Sprintf(
		"the API token this request came with expires at %s, and a token it makes cannot last longer: %s; sign in to the portal to make a longer-lived one",
		callerExp.UTC().Format(time.RFC3339), most))
}
