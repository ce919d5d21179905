package handlers

import (
	"net/http"
	"net/url"
	"strings"

	"github.com/gin-gonic/gin"
)

// refuseFromNotebook answers 403 to a session-authenticated request that
// the browser says came from a document under /wb/ on this same host: in
// path mode a notebook runs in the portal's origin, and its script must
// not use the user's session to read or change the portal.
//
// Browsers tell us through Referer (the portal sends Referrer-Policy
// same-origin, Jupyter's pages keep the default, so same-origin requests
// carry the full URL). Script can suppress Referer, so this is a first
// line only; sudo mode and the notebook domain are what hold.
//
// A plain top-level GET navigation passes (a link from a notebook to the
// portal): the portal's pages cannot be framed, and their
// Cross-Origin-Opener-Policy severs any window the notebook opened, so the
// notebook cannot read what the navigation shows. Logging out always
// passes. API tokens carry no ambient credential and are not affected.
func (h *Handler) refuseFromNotebook(c *gin.Context) {
	if c.GetBool(ctxBearerKey) || currentUser(c) == nil || c.Request.URL.Path == "/logout" {
		c.Next()
		return
	}
	r := c.Request
	if !fromNotebook(r) {
		c.Next()
		return
	}
	if r.Method == http.MethodGet && r.Header.Get("Sec-Fetch-Mode") == "navigate" && r.Header.Get("Sec-Fetch-Dest") == "document" {
		c.Next()
		return
	}
	h.log.Warn("request from a notebook page refused", "method", r.Method, "path", r.URL.Path,
		"referer", r.Referer(), "sec_fetch_dest", r.Header.Get("Sec-Fetch-Dest"), "user", currentUser(c).Username)
	h.fail(c, newError(http.StatusForbidden, "from_notebook",
		"the portal does not answer requests made by a notebook page (/wb/…); open the portal in its own tab"))
}

// fromNotebook reports whether r's Referer is a /wb/ page of this host.
func fromNotebook(r *http.Request) bool {
	ref := r.Header.Get("Referer")
	if ref == "" {
		return false
	}
	u, err := url.Parse(ref)
	if err != nil || !strings.EqualFold(u.Host, r.Host) {
		return false
	}
	return notebookPath(u)
}

// notebookPath reports whether u is a notebook's page (/wb/…), escaped or not.
func notebookPath(u *url.URL) bool {
	return strings.HasPrefix(u.EscapedPath(), "/wb/") || strings.HasPrefix(u.Path, "/wb/")
}
