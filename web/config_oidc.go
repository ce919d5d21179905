package web

import (
	"errors"
	"fmt"
	"net/url"
	"strings"

	"workbench/handlers"
)

// validateOIDC checks the single sign-on settings: all or nothing.
func (c *Config) validateOIDC() error {
	switch c.LocalLogin {
	case "", "all", "admins":
	default:
		return fmt.Errorf("invalid WORKBENCH_LOCAL_LOGIN / --local-login %q: want all or admins", c.LocalLogin)
	}
	if c.OIDCIssuer == "" {
		if c.LocalLogin == "admins" {
			return errors.New("invalid WORKBENCH_LOCAL_LOGIN=admins: only with single sign-on (WORKBENCH_OIDC_ISSUER), or no one else could sign in")
		}
		return nil
	}
	u, err := url.Parse(c.OIDCIssuer)
	if err != nil || (u.Scheme != "https" && u.Scheme != "http") || u.Host == "" {
		return fmt.Errorf("invalid WORKBENCH_OIDC_ISSUER / --oidc-issuer %q: want the provider's https:// issuer URL", c.OIDCIssuer)
	}
	if c.OIDCClientID == "" {
		return errors.New("invalid single sign-on settings: WORKBENCH_OIDC_CLIENT_ID is required with WORKBENCH_OIDC_ISSUER")
	}
	if strings.TrimSpace(c.OIDCUsernameClaim) == "" {
		return errors.New("invalid WORKBENCH_OIDC_USERNAME_CLAIM: must not be empty")
	}
	if _, err := parseGroupMap(c.OIDCGroupMap); err != nil {
		return fmt.Errorf("invalid WORKBENCH_OIDC_GROUP_MAP / --oidc-group-map: %v", err)
	}
	return nil
}

// parseGroupMap reads "directory=portal;directory2=portal2". Entries are
// separated by ';' (or new lines) and split at the last '=', since LDAP
// group names (cn=ml,ou=groups) contain '=' and ','.
func parseGroupMap(s string) (map[string]string, error) {
	out := map[string]string{}
	for _, e := range strings.FieldsFunc(s, func(r rune) bool { return r == ';' || r == '\n' }) {
		e = strings.TrimSpace(e)
		if e == "" {
			continue
		}
		i := strings.LastIndex(e, "=")
		if i <= 0 || i == len(e)-1 {
			return nil, fmt.Errorf("entry %q: want directory-group=portal-group", e)
		}
		dir, portal := strings.TrimSpace(e[:i]), strings.TrimSpace(e[i+1:])
		if dir == "" || portal == "" {
			return nil, fmt.Errorf("entry %q: want directory-group=portal-group", e)
		}
		out[dir] = portal
	}
	return out, nil
}

// oidcHandlerConfig is the handlers' view of the SSO settings.
func (c *Config) oidcHandlerConfig() handlers.OIDCConfig {
	if c.OIDCIssuer == "" {
		return handlers.OIDCConfig{}
	}
	gm, _ := parseGroupMap(c.OIDCGroupMap) // checked by Validate
	label := c.OIDCLabel
	if label == "" {
		label = "single sign-on"
	}
	claim := c.OIDCGroupsClaim
	if claim == "" {
		claim = "groups"
	}
	return handlers.OIDCConfig{Issuer: c.OIDCIssuer, ClientID: c.OIDCClientID, ClientSecret: c.OIDCClientSecret,
		Scopes: strings.Fields(c.OIDCScopes), UsernameClaim: c.OIDCUsernameClaim, GroupsClaim: claim,
		GroupMap: gm, Label: label, LocalLoginAdminsOnly: c.LocalLogin == "admins"}
}
