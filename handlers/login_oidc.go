package handlers

import (
	"crypto/subtle"
	"errors"
	"net/http"
	"net/url"
	"strings"
	"time"

	"github.com/coreos/go-oidc/v3/oidc"
	"github.com/gin-gonic/gin"
	"golang.org/x/oauth2"

	"workbench/models"
	"workbench/templates"
	"workbench/templates/i18n"
)

// Single sign-on: GET /login/oidc sends the browser to the provider with a
// fresh state (against login CSRF), nonce (against ID token replay) and
// PKCE challenge (against a stolen code), all kept in the server-side
// session; GET /login/oidc/callback checks them, exchanges the code,
// verifies the ID token and signs the user in, making the account on the
// first sign-in. With ?sudo=1 the same round trip, forcing a fresh
// sign-in at the provider, opens sudo mode for an SSO account, which has
// no password to confirm.
const (
	sessionOIDCState    = "oidc_state"
	sessionOIDCNonce    = "oidc_nonce"
	sessionOIDCVerifier = "oidc_verifier"
	sessionOIDCNext     = "oidc_next"
	sessionOIDCSudo     = "oidc_sudo"
	oidcCallbackPath    = "/login/oidc/callback"
)

// oidcRedirectURL is the callback URL registered at the provider.
func (h *Handler) oidcRedirectURL(c *gin.Context) string {
	base := strings.TrimSuffix(h.cfg.PublicURL, "/")
	if base == "" {
		scheme := "http"
		if c.Request.TLS != nil {
			scheme = "https"
		}
		base = scheme + "://" + c.Request.Host
	}
	return base + oidcCallbackPath
}

// oidcStart: GET /login/oidc?next=/path[&sudo=1].
func (h *Handler) oidcStart(c *gin.Context) {
	if h.oidc == nil {
		h.fail(c, errNotFound)
		return
	}
	sudo := c.Query("sudo") == "1"
	if sudo && !currentUser(c).SSO() {
		h.fail(c, newError(http.StatusBadRequest, "not_sso", "this account confirms with its password at /sudo"))
		return
	}
	p, err := h.oidc.provider()
	if err != nil {
		h.log.Error("oidc discovery", "issuer", h.oidc.cfg.Issuer, "err", err)
		h.loginRefused(c, http.StatusBadGateway, i18n.T(c.Request.Context(), "The sign-in provider cannot be reached just now. Try again in a moment."))
		return
	}
	ctx := c.Request.Context()
	state, nonce, verifier := models.RandomSecret(32), models.RandomSecret(32), oauth2.GenerateVerifier()
	h.sessions.Put(ctx, sessionOIDCState, state)
	h.sessions.Put(ctx, sessionOIDCNonce, nonce)
	h.sessions.Put(ctx, sessionOIDCVerifier, verifier)
	h.sessions.Put(ctx, sessionOIDCNext, safeNext(c.Query("next")))
	opts := []oauth2.AuthCodeOption{oidc.Nonce(nonce), oauth2.S256ChallengeOption(verifier)}
	if sudo {
		h.sessions.Put(ctx, sessionOIDCSudo, true)
		// A fresh authentication at the provider, not its remembered session.
		opts = append(opts, oauth2.SetAuthURLParam("prompt", "login"), oauth2.SetAuthURLParam("max_age", "0"))
	} else {
		h.sessions.Remove(ctx, sessionOIDCSudo)
	}
	c.Redirect(http.StatusFound, h.oidc.oauth2Config(p, h.oidcRedirectURL(c)).AuthCodeURL(state, opts...))
}

// oidcCallback: GET /login/oidc/callback?code=…&state=….
func (h *Handler) oidcCallback(c *gin.Context) {
	if h.oidc == nil {
		h.fail(c, errNotFound)
		return
	}
	ctx := c.Request.Context()
	state := h.sessions.PopString(ctx, sessionOIDCState)
	nonce := h.sessions.PopString(ctx, sessionOIDCNonce)
	verifier := h.sessions.PopString(ctx, sessionOIDCVerifier)
	next := safeNext(h.sessions.PopString(ctx, sessionOIDCNext))
	sudo := h.sessions.PopBool(ctx, sessionOIDCSudo)
	got := c.Query("state")
	if state == "" || subtle.ConstantTimeCompare([]byte(state), []byte(got)) != 1 {
		// Not a sign-in this browser started (login CSRF), or one already used.
		h.log.Warn("oidc callback: state mismatch", "addr", c.ClientIP())
		h.loginRefused(c, http.StatusBadRequest, i18n.T(c.Request.Context(), "This sign-in was not started here or has already been used. Start again."))
		return
	}
	if e := c.Query("error"); e != "" {
		h.log.Info("oidc: provider refused", "error", e, "description", c.Query("error_description"))
		h.loginRefused(c, http.StatusUnauthorized, i18n.T(c.Request.Context(), "The sign-in provider refused: %s", oidcErrorText(e, c.Query("error_description"))))
		return
	}
	p, err := h.oidc.provider()
	if err != nil {
		h.log.Error("oidc discovery", "err", err)
		h.loginRefused(c, http.StatusBadGateway, i18n.T(c.Request.Context(), "The sign-in provider cannot be reached just now. Try again in a moment."))
		return
	}
	octx := oidc.ClientContext(ctx, oidcHTTP)
	tok, err := h.oidc.oauth2Config(p, h.oidcRedirectURL(c)).Exchange(octx, c.Query("code"), oauth2.VerifierOption(verifier))
	if err != nil {
		h.log.Warn("oidc: code exchange failed", "err", err)
		h.loginRefused(c, http.StatusUnauthorized, i18n.T(c.Request.Context(), "The sign-in could not be completed (code exchange refused). Start again."))
		return
	}
	raw, _ := tok.Extra("id_token").(string)
	if raw == "" {
		h.log.Warn("oidc: token response without id_token")
		h.loginRefused(c, http.StatusUnauthorized, i18n.T(c.Request.Context(), "The sign-in provider sent no ID token."))
		return
	}
	idt, err := h.oidc.verifier(p).Verify(octx, raw)
	if err != nil {
		// Signature, issuer, audience or expiry: say which in the log only.
		h.log.Warn("oidc: ID token refused", "err", err)
		h.loginRefused(c, http.StatusUnauthorized, i18n.T(c.Request.Context(), "The sign-in could not be verified. Start again."))
		return
	}
	if nonce == "" || subtle.ConstantTimeCompare([]byte(idt.Nonce), []byte(nonce)) != 1 {
		h.log.Warn("oidc: ID token nonce mismatch", "subject", idt.Subject)
		h.loginRefused(c, http.StatusUnauthorized, i18n.T(c.Request.Context(), "The sign-in could not be verified (replayed token). Start again."))
		return
	}
	var claims map[string]any
	if err := idt.Claims(&claims); err != nil {
		h.fail(c, err)
		return
	}
	if sudo {
		h.oidcSudo(c, idt, claims, next)
		return
	}
	h.oidcSignIn(c, idt, claims, next)
}

// oidcSignIn makes or finds the account, syncs its groups and starts the
// portal session.
func (h *Handler) oidcSignIn(c *gin.Context, idt *oidc.IDToken, claims map[string]any, next string) {
	ctx := c.Request.Context()
	cfg := h.oidc.cfg
	existing, err := h.store.GroupNames(ctx)
	if err != nil {
		h.fail(c, err)
		return
	}
	directory := claimStrings(claims, cfg.GroupsClaim)
	groups, managed, create := h.oidc.portalGroups(directory, existing)
	// The account (created, or its groups synced) commits with its audit
	// row: user.create_sso for a new account, else session.login_sso.
	var u *models.User
	var created bool
	err = h.wbs.Audited(ctx, "", func(tx *models.Store) (models.AuditRecord, error) {
		var err error
		u, created, err = tx.OIDCSignIn(ctx, models.OIDCIdentity{
			Issuer: idt.Issuer, Subject: idt.Subject,
			Username: claimString(claims, cfg.UsernameClaim), Email: claimString(claims, "email"), DisplayName: claimString(claims, "name"),
			Groups: groups, Managed: managed, CreateGroups: create,
		})
		if err != nil {
			return models.AuditRecord{}, err
		}
		if created {
			return models.AuditRecord{Actor: u.Username, Action: "user.create_sso", Target: u.Username,
				After: map[string]any{"issuer": idt.Issuer, "subject": idt.Subject, "groups": groups}}, nil
		}
		return models.AuditRecord{Actor: u.Username, Action: "session.login_sso", Target: u.Username, After: map[string]any{"groups": groups}}, nil
	})
	var ve *models.ValidationError
	switch {
	case errors.Is(err, models.ErrAccountDisabled):
		h.log.Info("oidc: disabled account refused", "subject", idt.Subject)
		h.loginRefused(c, http.StatusForbidden, i18n.T(c.Request.Context(), "Your account is disabled. Ask an administrator."))
		return
	case errors.Is(err, models.ErrUsernameTaken):
		h.log.Warn("oidc: username taken by another account", "username", claimString(claims, cfg.UsernameClaim), "subject", idt.Subject)
		h.loginRefused(c, http.StatusConflict, i18n.T(c.Request.Context(), "An account named %s already exists in the portal and is not linked to your sign-in. Ask an administrator.", claimString(claims, cfg.UsernameClaim)))
		return
	case errors.As(err, &ve):
		h.log.Warn("oidc: unusable username claim", "claim", cfg.UsernameClaim, "value", claimString(claims, cfg.UsernameClaim))
		h.loginRefused(c, http.StatusForbidden, i18n.T(c.Request.Context(), "Your sign-in has no usable username (claim %s: %s). Ask an administrator.", cfg.UsernameClaim, ve.Message))
		return
	case err != nil:
		h.fail(c, err)
		return
	}
	if err := h.sessions.RenewToken(ctx); err != nil {
		h.fail(c, err)
		return
	}
	h.sessions.Put(ctx, sessionUserKey, u.ID)
	h.sessions.Put(ctx, sessionEpochKey, u.AuthEpoch)
	c.Set(ctxUserKey, u)
	if created {
		h.record(c, "session.login_sso", u.Username, nil, map[string]any{"groups": groups})
	}
	h.log.Info("login", "username", u.Username, "via", "oidc", "created", created, "groups", groups, "addr", c.ClientIP())
	h.seeOther(c, next)
}

// oidcSudo opens sudo mode when the provider has just authenticated the
// same person again (auth_time within the sudo window).
func (h *Handler) oidcSudo(c *gin.Context, idt *oidc.IDToken, claims map[string]any, next string) {
	u := currentUser(c)
	if u == nil || !u.SSO() || u.OIDCIssuer != idt.Issuer || u.OIDCSubject != idt.Subject {
		h.loginRefused(c, http.StatusForbidden, i18n.T(c.Request.Context(), "That sign-in is another account than yours."))
		return
	}
	at, _ := claims["auth_time"].(float64)
	if at == 0 || time.Since(time.Unix(int64(at), 0)) > sudoWindow {
		h.loginRefused(c, http.StatusForbidden, i18n.T(c.Request.Context(), "The provider did not sign you in afresh; confirm again."))
		return
	}
	h.sessions.Put(c.Request.Context(), sessionSudoKey, time.Now().Unix())
	h.record(c, "session.sudo", u.Username, nil, map[string]string{"via": "oidc"})
	h.seeOther(c, next)
}

// loginRefused shows the sign-in page with why.
func (h *Handler) loginRefused(c *gin.Context, status int, msg string) {
	c.Header("Cache-Control", "no-store")
	h.render(c, status, templates.LoginPage(h.page(c, i18n.T(c.Request.Context(), "Log in")), h.loginForm0(templates.LoginForm{Error: msg, Next: "/"})))
}

// loginForm0 completes a LoginForm with the single sign-on button.
func (h *Handler) loginForm0(f templates.LoginForm) templates.LoginForm {
	if h.oidc != nil {
		f.SSOLabel = h.oidc.cfg.Label
		f.SSOURL = "/login/oidc?next=" + url.QueryEscape(f.Next)
		f.LocalAdminsOnly = h.oidc.cfg.LocalLoginAdminsOnly
	}
	return f
}

// oidcErrorText is the provider's error for people: its description when
// it sent one, else the code.
func oidcErrorText(code, desc string) string {
	if desc = strings.TrimSpace(desc); desc != "" {
		if len(desc) > 200 {
			desc = desc[:200]
		}
		return desc
	}
	return code
}
