package handlers

import (
	"context"
	"errors"
	"strings"
	"time"

	"github.com/gin-gonic/gin"

	"workbench/models"
)

const (
	sessionUserKey = "user_id"
	// sessionEpochKey is the user's auth epoch at login; a later
	// revocation moves the user on and so ends this session.
	sessionEpochKey = "auth_epoch"
	flashKey        = "flash"
	ctxUserKey      = "user"
	// ctxAuthAtKey is when the request was authenticated: the live
	// registry ends a stream opened before a revocation (trackStream).
	ctxAuthAtKey = "auth_at"
)

// loadUser is middleware that finds the caller: an API bearer token, else
// the session. It never refuses; requireUser does that.
func (h *Handler) loadUser(c *gin.Context) {
	if authz := c.GetHeader("Authorization"); authz != "" {
		secret, ok := BearerSecret(authz)
		if !ok {
			h.fail(c, newError(401, "unauthorized", "the Authorization header must be 'Bearer <token>'"))
			return
		}
		u, tok, err := h.store.AuthByToken(c.Request.Context(), secret)
		if err != nil {
			if errors.Is(err, models.ErrBadToken) {
				h.fail(c, newError(401, "invalid_token", err.Error()))
			} else {
				h.fail(c, storeUnavailable(h.log, c.Request, err))
			}
			return
		}
		c.Set(ctxUserKey, u)
		c.Set(ctxBearerKey, true)
		c.Set(ctxBearerExpiresKey, tok.ExpiresAt)
		c.Set(ctxAuthAtKey, time.Now())
		// What this request changes is audited as done through the token.
		c.Request = c.Request.WithContext(models.WithAuditVia(c.Request.Context(), models.TokenVia(tok)))
		c.Next()
		return
	}
	u, err := h.sessionUser(c.Request.Context())
	if err != nil {
		h.fail(c, storeUnavailable(h.log, c.Request, err))
		return
	}
	if u != nil {
		c.Set(ctxUserKey, u)
		c.Set(ctxAuthAtKey, time.Now())
	}
	c.Next()
}

// apiTokenGrant names what an API token authenticates in the registry of
// live requests (proxy.Live), as workbenchTokenGrant does for workbench
// tokens; a portal session's grant is its token's hash alone.
func apiTokenGrant(tokenHash string) string { return "wbt:" + tokenHash }

// requestGrant is what authenticated c's request, as the live registry
// names it: its API token's grant, else its session's (the session
// token's hash, as the proxy's).
func (h *Handler) requestGrant(c *gin.Context) string {
	if c.GetBool(ctxBearerKey) {
		secret, _ := BearerSecret(c.GetHeader("Authorization"))
		return apiTokenGrant(models.HashSecret(secret))
	}
	return models.HashSecret(h.sessions.Token(c.Request.Context()))
}

// isSessionGrant tells a portal session's grant (and its notebook
// sessions') from a token's.
func isSessionGrant(grant string) bool {
	return !strings.HasPrefix(grant, apiTokenGrant("")) && !strings.HasPrefix(grant, workbenchTokenGrant(""))
}

// trackStream registers a long-lived response (a followed log, an event
// stream) with the live registry under the caller's user and grant, and
// points the request at a context that revocation cancels: logging out,
// revoking the token, a password change or disabling the account ends the
// stream at once, as it ends proxied WebSockets. Call the returned func
// when the stream ends.
func (h *Handler) trackStream(c *gin.Context) func() {
	u := currentUser(c)
	at, _ := c.Get(ctxAuthAtKey)
	started, _ := at.(time.Time)
	ctx, stop := h.live.Track(c.Request.Context(), u.ID, h.requestGrant(c), started)
	c.Request = c.Request.WithContext(ctx)
	return stop
}

// SessionUser returns the logged-in, enabled user of the session in ctx,
// or nil (also when the store could not be asked; the session is kept).
func (h *Handler) SessionUser(ctx context.Context) *models.User {
	u, _ := h.sessionUser(ctx)
	return u
}

// sessionUser is SessionUser telling a store failure (err) apart from a
// session that is no login (nil, nil). Only the latter destroys the
// session — the session of a disabled or deleted user, or of an older
// login epoch: a database that is briefly busy must not log anyone out.
func (h *Handler) sessionUser(ctx context.Context) (*models.User, error) {
	id := h.sessions.GetInt64(ctx, sessionUserKey)
	if id == 0 {
		return nil, nil
	}
	u, err := h.store.UserByID(ctx, id)
	if err != nil && !errors.Is(err, models.ErrNotFound) {
		return nil, err
	}
	if err != nil || u.Disabled || h.sessions.GetInt64(ctx, sessionEpochKey) != u.AuthEpoch {
		_ = h.sessions.Destroy(ctx)
		return nil, nil
	}
	return u, nil
}

func currentUser(c *gin.Context) *models.User {
	if v, ok := c.Get(ctxUserKey); ok {
		return v.(*models.User)
	}
	return nil
}

func (h *Handler) requireUser(c *gin.Context) {
	if currentUser(c) == nil {
		h.fail(c, errUnauthorized)
		return
	}
	c.Next()
}

func (h *Handler) requireAdmin(c *gin.Context) {
	u := currentUser(c)
	if u == nil {
		h.fail(c, errUnauthorized)
		return
	}
	if !u.IsAdmin() {
		h.fail(c, errForbidden)
		return
	}
	c.Next()
}

func (h *Handler) flash(c *gin.Context, msg string) {
	h.sessions.Put(c.Request.Context(), flashKey, msg)
	h.sessions.Remove(c.Request.Context(), flashKindKey)
	c.Set(pendingErrorKey, "") // a success replaces an earlier error
}
