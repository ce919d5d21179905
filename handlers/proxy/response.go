package proxy

import (
	"net/http"
	"net/url"
	"strings"
)

// modifyResponse keeps Jupyter's headers (including its
// Content-Security-Policy) except where the notebook could reach into the
// portal. ReverseProxy calls it for final responses and for 101 Switching
// Protocols (before the headers are copied onto the hijacked connection);
// other 1xx responses go through guardWriter instead.
func (p *Proxy) modifyResponse(res *http.Response) error {
	ri := infoFrom(res.Request.Context())
	guardResponseHeaders(res.Header, ri != nil && ri.scoped)
	if res.StatusCode == http.StatusSwitchingProtocols {
		if ri != nil {
			p.wrapUpgraded(res, ri.id)
		}
		return nil
	}
	res.Header.Set("X-Content-Type-Options", "nosniff")
	if ri != nil {
		p.watchResponseBody(res, ri.id) // a long download counts as activity (transfer_activity.go)
	}
	return nil
}

// guardResponseHeaders is what both upstream paths (ReverseProxy's
// modifyResponse and the lean path's writeResponse) do to every response
// head from a notebook, so that a new rule cannot reach only one of them.
func guardResponseHeaders(h http.Header, scoped bool) {
	stripUpstreamHeaders(h)
	if scoped {
		// Script never runs in the portal's origin from a token request.
		h.Set("Content-Security-Policy", "sandbox")
		// Nor does a token link send its visitor elsewhere: any user
		// could make one that redirects from the portal's address to a
		// site of theirs (a phishing page). Jupyter's own redirects stay
		// on the portal: they name a path.
		if offSite(h.Get("Location")) {
			h.Del("Location")
		}
	}
}

// offSite reports whether a redirect target leaves the origin it came
// from: an absolute URL, or a scheme-relative one ("//host/…", "/\host",
// which browsers read alike).
func offSite(loc string) bool {
	loc = strings.TrimLeft(loc, " \t")
	if strings.HasPrefix(loc, "//") || strings.HasPrefix(loc, "/\\") || strings.HasPrefix(loc, "\\") {
		return true
	}
	u, err := url.Parse(loc)
	return err != nil || u.Scheme != "" || u.Host != ""
}

// stripUpstreamHeaders removes what a notebook must never say on the
// portal's behalf:
//   - Set-Cookie, all of it: in path mode any cookie Jupyter sets lands on
//     the portal's origin (it could shadow or replace the session cookie,
//     even on a WebSocket handshake); Jupyter needs none, since every
//     proxied request carries the workbench token.
//   - Service-Worker-Allowed: with it a notebook could register a service
//     worker scoped to "/" that serves a fake login page to whoever uses
//     the browser next, surviving logout.
//   - Clear-Site-Data: it would let a notebook log the user out of the
//     portal or wipe its storage.
func stripUpstreamHeaders(h http.Header) {
	h.Del("Set-Cookie")
	h.Del("Service-Worker-Allowed")
	h.Del("Clear-Site-Data")
}

// guardWriter strips the same headers from informational (1xx) responses,
// which ReverseProxy forwards from its own ClientTrace hook without calling
// ModifyResponse.
type guardWriter struct {
	http.ResponseWriter
}

func (g guardWriter) WriteHeader(code int) {
	if code >= 100 && code < 200 {
		stripUpstreamHeaders(g.ResponseWriter.Header())
	}
	g.ResponseWriter.WriteHeader(code)
}

// Unwrap lets http.ResponseController reach Flush and Hijack.
func (g guardWriter) Unwrap() http.ResponseWriter { return g.ResponseWriter }
