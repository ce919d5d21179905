package proxy

import (
	"net/http"
	"strings"
)

// modifyResponse keeps Jupyter's headers (including its
// Content-Security-Policy) except where the notebook, which runs in the
// portal's origin, could reach into the portal.
func (p *Proxy) modifyResponse(res *http.Response) error {
	if res.StatusCode == http.StatusSwitchingProtocols {
		if ri := infoFrom(res.Request.Context()); ri != nil {
			p.wrapUpgraded(res, ri.id)
		}
		return nil
	}
	h := res.Header
	stripSetCookie(h, p.opts.SessionCookieName)
	// Clear-Site-Data would let a notebook log the user out of the portal.
	h.Del("Clear-Site-Data")
	h.Set("X-Content-Type-Options", "nosniff")
	return nil
}

// stripSetCookie removes Set-Cookie lines that would set, shadow (e.g. with
// Path=/wb/…) or delete the portal's session cookie. Names are compared
// case-insensitively: dropping a look-alike costs nothing.
func stripSetCookie(h http.Header, name string) {
	lines := h["Set-Cookie"]
	if name == "" || len(lines) == 0 {
		return
	}
	kept := lines[:0:0]
	for _, line := range lines {
		n, _, _ := strings.Cut(line, "=")
		if strings.EqualFold(strings.TrimSpace(n), name) {
			continue
		}
		kept = append(kept, line)
	}
	if len(kept) == 0 {
		delete(h, "Set-Cookie")
		return
	}
	h["Set-Cookie"] = kept
}
