package web

import (
	"fmt"
	"net/http"
	"regexp"
	"strings"

	"workbench/handlers"
	"workbench/handlers/proxy"
	"workbench/models"
)

// hostnameRe is a DNS name of at least two labels, lower case, no port.
var hostnameRe = regexp.MustCompile(`^([a-z0-9]([a-z0-9-]{0,61}[a-z0-9])?\.)+[a-z0-9]([a-z0-9-]{0,61}[a-z0-9])?$`)

// validateNotebookDomain checks WORKBENCH_NOTEBOOK_DOMAIN. The notebook
// hosts take their scheme and port from the public URL, so it is needed;
// and the portal's own host must not be a notebook host.
func (c *Config) validateNotebookDomain() error {
	d := strings.ToLower(strings.TrimSuffix(strings.TrimSpace(c.NotebookDomain), "."))
	c.NotebookDomain = d
	if d == "" {
		return nil
	}
	if !hostnameRe.MatchString(d) {
		return fmt.Errorf("invalid WORKBENCH_NOTEBOOK_DOMAIN / --notebook-domain %q: want a domain name such as nb.example.org (no scheme, port or wildcard)", d)
	}
	if c.PublicURL == "" {
		return fmt.Errorf("WORKBENCH_NOTEBOOK_DOMAIN needs WORKBENCH_PUBLIC_URL (the notebook hosts use its scheme and port)")
	}
	host := strings.TrimPrefix(strings.TrimPrefix(c.PublicURL, "https://"), "http://")
	if i := strings.LastIndexByte(host, ':'); i >= 0 {
		host = host[:i]
	}
	if strings.HasSuffix(strings.ToLower(host), "."+d) {
		return fmt.Errorf("invalid WORKBENCH_NOTEBOOK_DOMAIN %q: the portal's own host %s must not be under it", d, host)
	}
	return nil
}

// sessionCookieName is the portal's session cookie name. With a notebook
// domain over https it carries the __Host- prefix: browsers then refuse
// the cookie unless it is Secure, host-only and for Path=/, so script on a
// notebook host cannot toss a workbench_session cookie for a shared parent
// domain (…; Domain=example.org) onto the portal.
func (c *Config) sessionCookieName() string {
	if c.NotebookDomain != "" && c.Secure() {
		return "__Host-" + SessionCookieName
	}
	return SessionCookieName
}

// pathModeOr is what the portal's host does with /wb/…: proxy it (path
// mode), or, with a notebook domain, send the owner to the workbench's own
// origin, which starts the one-time code exchange (handlers/notebook_host.go).
func (s *Server) pathModeOr(h *handlers.Handler, px http.Handler) http.Handler {
	if s.cfg.NotebookDomain == "" {
		return px
	}
	open := withSessions(s.sessions, http.HandlerFunc(h.NotebookOpen))
	// A Jupyter client with a workbench token is not a browser: it uses
	// the path-mode address, whose responses to token requests are
	// sandboxed (see proxy.ScopedToken).
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if _, ok := proxy.ScopedToken(r, models.WorkbenchTokenPrefix); ok {
			px.ServeHTTP(w, r)
			return
		}
		open.ServeHTTP(w, r)
	})
}

// routeNotebookHosts sends requests for {id}.<notebook domain> to that
// workbench's host handler and everything else to the portal. The
// notebook proxy has no trusted origins: CSRF and WebSocket Origin checks
// accept only the notebook host's own origin.
func (s *Server) routeNotebookHosts(h *handlers.Handler, portal http.Handler) http.Handler {
	if s.cfg.NotebookDomain == "" {
		return portal
	}
	scheme := "http"
	if s.cfg.Secure() {
		scheme = "https"
	}
	nbpx := proxy.New(proxy.Options{
		Metrics:           s.proxyMetrics,
		Resolve:           h.NotebookResolve,
		SignIn:            h.NotebookSignIn,
		Locale:            h.ProxyLocale,
		OnActivity:        s.Manager.Touch,
		ActivityInterval:  s.cfg.ActivityEvery,
		SessionCookieName: h.NotebookCookie(),
		StateCookieName:   h.NotebookStateCookie(),
		Logger:            s.log,
		Live:              h.Live(),
		Scheme:            scheme,
		ReverseProxyOnly:  s.cfg.ProxyUpstream == "reverseproxy",
		MaxBody:           s.cfg.ProxyMaxBody(),
		SSH:               s.cfg.SSHAddr != "",
	})
	nb := h.NotebookHost(nbpx)
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if _, ok := h.NotebookHostID(r.Host); ok {
			nb.ServeHTTP(w, r)
			return
		}
		portal.ServeHTTP(w, r)
	})
}
