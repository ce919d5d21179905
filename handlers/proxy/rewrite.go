package proxy

import (
	"net/http"
	"net/http/httputil"
	"strings"
)

// rewrite turns the client's request into the one Jupyter sees. The path
// and query are kept byte for byte (Jupyter runs with base_url /wb/{id}/).
func (p *Proxy) rewrite(pr *httputil.ProxyRequest) {
	ri := infoFrom(pr.In.Context())
	pr.Out.URL.Scheme = ri.target.BaseURL.Scheme
	pr.Out.URL.Host = ri.target.BaseURL.Host
	if pre := ri.target.StripPrefix; pre != "" {
		pr.Out.URL.Path = "/" + strings.TrimPrefix(strings.TrimPrefix(pr.Out.URL.Path, pre), "/")
		if pr.Out.URL.RawPath != "" {
			pr.Out.URL.RawPath = "/" + strings.TrimPrefix(strings.TrimPrefix(pr.Out.URL.RawPath, pre), "/")
		}
	}
	// Keep the portal's Host: Jupyter compares Origin with Host for
	// WebSockets and API calls, and the browser's Origin is the portal.
	pr.Out.Host = pr.In.Host
	if ri.scoped {
		stripScopedQuery(pr.Out.URL, p.opts.ScopedTokenPrefix)
	}

	h := pr.Out.Header
	stripCookie(h, p.opts.SessionCookieName, p.opts.StateCookieName)
	if ref, changed := scopedReferer(h.Get("Referer"), p.opts.ScopedTokenPrefix); changed {
		if ref == "" {
			h.Del("Referer")
		} else {
			h.Set("Referer", ref)
		}
	}
	// The client's credentials are for the portal, never for Jupyter;
	// the only credential Jupyter sees is the workbench token.
	h.Del("Authorization")
	if ri.target.Token != "" {
		h.Set("Authorization", "token "+ri.target.Token)
	}
	// ReverseProxy drops X-Forwarded-For/Host/Proto before Rewrite; drop
	// the rest of the family too so that nothing the client claims about
	// itself reaches Jupyter as if the portal had said it.
	for k := range h {
		if strings.HasPrefix(k, "X-Forwarded-") {
			delete(h, k)
		}
	}
	h.Del("Forwarded")
	h.Del("X-Real-Ip")
	pr.SetXForwarded()
}

// stripCookie removes every cookie called name or name2 from the Cookie
// header(s) and leaves the others byte for byte, merged into one header
// line as HTTP/1.1 requires.
func stripCookie(h http.Header, name, name2 string) {
	if name == "" || len(h["Cookie"]) == 0 {
		return
	}
	if kept, ok := keptCookies(h["Cookie"], name, name2); ok {
		h.Set("Cookie", kept)
		return
	}
	h.Del("Cookie")
}

// keptCookies is the Cookie header line that stripCookie leaves of lines;
// ok is false when none is left. name must not be empty; name2 may be.
func keptCookies(lines []string, name, name2 string) (string, bool) {
	if len(lines) == 0 {
		return "", false
	}
	kept := make([]string, 0, 8)
	for _, line := range lines {
		for part := range strings.SplitSeq(line, ";") {
			part = strings.TrimSpace(part)
			if part == "" {
				continue
			}
			n, _, _ := strings.Cut(part, "=")
			if n = strings.TrimSpace(n); n == name || n == name2 && name2 != "" {
				continue
			}
			kept = append(kept, part)
		}
	}
	if len(kept) == 0 {
		return "", false
	}
	return strings.Join(kept, "; "), true
}
