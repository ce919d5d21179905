package handlers

import (
	"context"
	"errors"
	"net/http"
	"strings"
	"sync"
	"time"

	"github.com/coreos/go-oidc/v3/oidc"
	"golang.org/x/oauth2"
)

// OIDCConfig is single sign-on through an OpenID Connect provider (Keycloak,
// Dex, Authentik, Azure AD, Google…): authorization code flow with PKCE,
// state and nonce. Zero Issuer: off.
type OIDCConfig struct {
	Issuer       string
	ClientID     string
	ClientSecret string
	// Scopes asked for; "openid" is always added.
	Scopes []string
	// UsernameClaim names the claim that becomes the username on the
	// first sign-in (default preferred_username); GroupsClaim the claim
	// listing the user's directory groups (default groups).
	UsernameClaim string
	GroupsClaim   string
	// GroupMap maps directory groups to portal groups; the mapped portal
	// groups are made when missing and their membership follows the
	// directory at every sign-in. Empty: a directory group joins the
	// portal group of the same name if there is one, and every portal
	// group's membership of SSO users follows the directory.
	GroupMap map[string]string
	// Label is the provider's name on the sign-in button.
	Label string
	// LocalLoginAdminsOnly refuses password sign-in to everyone but
	// admins (who keep it as the way in when the provider is down).
	LocalLoginAdminsOnly bool
}

// Enabled reports whether single sign-on is configured.
func (c OIDCConfig) Enabled() bool { return c.Issuer != "" }

// oidcClient holds the provider's discovery document and keys, fetched on
// first use (and again after a failure): the portal starts, and local
// admins can sign in, while the provider is unreachable.
type oidcClient struct {
	cfg OIDCConfig
	mu  sync.Mutex
	p   *oidc.Provider
}

// oidcHTTP bounds every call to the provider.
var oidcHTTP = &http.Client{Timeout: 15 * time.Second}

func (o *oidcClient) provider() (*oidc.Provider, error) {
	o.mu.Lock()
	defer o.mu.Unlock()
	if o.p != nil {
		return o.p, nil
	}
	// Not the request's context: the provider keeps it for refreshing
	// its keys after this request is gone.
	ctx := oidc.ClientContext(context.Background(), oidcHTTP)
	p, err := oidc.NewProvider(ctx, o.cfg.Issuer)
	if err != nil {
		return nil, err
	}
	o.p = p
	return p, nil
}

// oauth2Config is the client registration; redirect is the callback URL
// registered at the provider.
func (o *oidcClient) oauth2Config(p *oidc.Provider, redirect string) *oauth2.Config {
	scopes := []string{oidc.ScopeOpenID}
	for _, s := range o.cfg.Scopes {
		if s = strings.TrimSpace(s); s != "" && s != oidc.ScopeOpenID {
			scopes = append(scopes, s)
		}
	}
	return &oauth2.Config{ClientID: o.cfg.ClientID, ClientSecret: o.cfg.ClientSecret,
		Endpoint: p.Endpoint(), RedirectURL: redirect, Scopes: scopes}
}

// verifier checks an ID token's signature (against the provider's keys),
// issuer, audience (our client id) and expiry.
func (o *oidcClient) verifier(p *oidc.Provider) *oidc.IDTokenVerifier {
	return p.Verifier(&oidc.Config{ClientID: o.cfg.ClientID})
}

// portalGroups maps the directory groups of a sign-in to portal groups
// and says which portal groups the directory manages (see GroupMap).
func (o *oidcClient) portalGroups(directory []string, existing []string) (groups, managed []string, create bool) {
	if len(o.cfg.GroupMap) > 0 {
		seen := map[string]bool{}
		for _, pg := range o.cfg.GroupMap {
			if !seen[pg] {
				seen[pg] = true
				managed = append(managed, pg)
			}
		}
		for _, g := range directory {
			if pg, ok := o.cfg.GroupMap[g]; ok {
				groups = append(groups, pg)
			}
		}
		return groups, managed, true
	}
	have := map[string]string{}
	for _, g := range existing {
		have[strings.ToLower(g)] = g
	}
	for _, g := range directory {
		if pg, ok := have[strings.ToLower(g)]; ok {
			groups = append(groups, pg)
		}
	}
	return groups, existing, false
}

// claimString reads a string claim; claimStrings a list claim (also a
// single string, or a space-separated one as some providers send).
func claimString(claims map[string]any, name string) string {
	s, _ := claims[name].(string)
	return s
}

func claimStrings(claims map[string]any, name string) []string {
	switch v := claims[name].(type) {
	case string:
		return strings.Fields(v)
	case []any:
		out := make([]string, 0, len(v))
		for _, e := range v {
			if s, ok := e.(string); ok && s != "" {
				out = append(out, s)
			}
		}
		return out
	}
	return nil
}

var errOIDCOff = errors.New("single sign-on is not configured")
