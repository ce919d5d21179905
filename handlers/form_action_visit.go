package handlers

import (
	"net/http"
	"net/url"
	"strings"

	"github.com/gin-gonic/gin"
)

// A form that fails is answered in place: the page comes back with the
// error and what was typed, at the address the form posted to
// (/workbenches, /admin/quotas/user/alice). The browser keeps that address
// in its bar and its history, so a person who presses Enter there, or
// picks it from the history later, sends a GET to an address that only
// takes POST. Rather than a bare 405, such a visit is sent to the page the
// form lives on.

// formPages names the page of the forms whose page is not found by
// shortening their address (formActionPage): the first prefix that
// matches wins.
var formPages = []struct{ prefix, page string }{
	{"/reservations", "/gpus"},
	{"/images/", "/images/saved"},
	{"/admin/gpus/", "/gpus"},
	{"/admin/price-tiers", "/admin/prices"},
	{"/admin/priority-", "/admin/queue"},
	{"/admin/images/load", "/admin/registries"},
	{"/admin/images", "/catalog"},
	{"/admin/flavors", "/catalog"},
	{"/admin/calculator/", "/calculator"},
}

// noVisit are POST-only addresses a visit is not redirected from: GET
// /logout must not look like it worked.
var noVisit = map[string]bool{"/logout": true}

// formActionPage returns the page a visit to path (a POST-only address)
// is sent to: from formPages, else the address shortened one segment at a
// time until a page (one of pages, gin patterns of the GET routes)
// answers it. The result is built from the pattern's own segments and the
// visited path's segments where the pattern has a parameter, each
// escaped, so it is always a path on this portal.
func formActionPage(pages []string, path string) (string, bool) {
	if noVisit[path] || path == "/api" || strings.HasPrefix(path, "/api/") || strings.HasPrefix(path, "/wb/") {
		return "", false
	}
	for _, f := range formPages {
		if strings.HasPrefix(path, f.prefix) {
			return f.page, true
		}
	}
	segs := strings.Split(strings.Trim(path, "/"), "/")
	for n := len(segs) - 1; n >= 0; n-- {
		for _, p := range pages {
			if target, ok := fillPattern(p, segs[:n]); ok {
				return target, true
			}
		}
	}
	return "", false
}

// fillPattern matches segs against a gin pattern of literal and :param
// segments and returns the path it names.
func fillPattern(pattern string, segs []string) (string, bool) {
	if pattern == "/" {
		return "/", len(segs) == 0
	}
	parts := strings.Split(strings.Trim(pattern, "/"), "/")
	if len(parts) != len(segs) {
		return "", false
	}
	var b strings.Builder
	for i, p := range parts {
		switch {
		case strings.HasPrefix(p, "*"):
			return "", false
		case strings.HasPrefix(p, ":"):
			if segs[i] == "" {
				return "", false
			}
			b.WriteString("/" + url.PathEscape(segs[i]))
		case p == segs[i]:
			b.WriteString("/" + p)
		default:
			return "", false
		}
	}
	return b.String(), true
}

// methodNotAllowed answers a request whose address exists for another
// method: HEAD of a page is its GET without the body (gin routes HEAD
// apart: /healthz answered 405, then a redirect), a visit to a form's
// address goes to the form's page, the rest is a 405 (gin has set Allow).
func (h *Handler) methodNotAllowed(r *gin.Engine, pages []string) gin.HandlerFunc {
	return func(c *gin.Context) {
		if c.Request.Method == http.MethodHead && isPage(pages, c.Request.URL.Path) {
			// Served as the GET; net/http drops the body of a HEAD
			// answer (it goes by the server's own request, still HEAD).
			get := *c.Request
			get.Method = http.MethodGet
			c.Request = &get
			r.HandleContext(c)
			return
		}
		if m := c.Request.Method; m == http.MethodGet || m == http.MethodHead {
			if page, ok := formActionPage(pages, c.Request.URL.Path); ok {
				c.Header("Allow", "")
				c.Redirect(http.StatusSeeOther, page)
				c.Abort()
				return
			}
		}
		if allow := c.Writer.Header().Get("Allow"); allow != "" && isAPI(c) {
			// Not a visit: a script sent the wrong method.
			h.fail(c, newError(http.StatusMethodNotAllowed, "method_not_allowed", c.Request.Method+" is not a method of this address; it takes "+allow))
			return
		}
		h.fail(c, newError(http.StatusMethodNotAllowed, "method_not_allowed", methodNotAllowedMessage))
	}
}

// methodNotAllowedMessage says what the address is for; pages translate it.
const methodNotAllowedMessage = "this address takes a form's button or an API call, not a visit; go back to the page and use its button"

// isPage reports whether path is served by one of the GET patterns pages.
func isPage(pages []string, path string) bool {
	segs := strings.Split(strings.Trim(path, "/"), "/")
	if path == "/" {
		segs = nil
	}
	for _, p := range pages {
		if strings.Contains(p, "*") {
			if strings.HasPrefix(path, strings.TrimRight(p[:strings.Index(p, "*")], "/")+"/") {
				return true
			}
			continue
		}
		if _, ok := fillPattern(p, segs); ok {
			return true
		}
	}
	return false
}

// getPatterns are the patterns of r's GET routes.
func getPatterns(r *gin.Engine) []string {
	var out []string
	for _, rt := range r.Routes() {
		if rt.Method == http.MethodGet {
			out = append(out, rt.Path)
		}
	}
	return out
}
