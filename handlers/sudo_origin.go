package handlers

import (
	"net/http"
	"net/url"
	"strings"

	"github.com/gin-gonic/gin"

	"workbench/templates"
	"workbench/templates/i18n"
)

// A sudo-guarded form is taken only from the portal's own pages. In path
// mode a notebook's script shares the portal's origin: it can submit a
// form with its Referer suppressed, and the confirm page then asked the
// user's password for a change the script had chosen (an SSH key of the
// attacker's), or, within the 10 minutes after any confirmation, made it
// without asking. A form the portal rendered is submitted as a navigation
// whose Referer is that page (the portal sends Referrer-Policy
// same-origin); script cannot forge that: fetch() is not a navigation,
// and a form it submits names the notebook page or nothing.

// fromPortalPage reports whether an unsafe form request came from a page
// of this host outside /wb/, as a navigation where the browser says.
func fromPortalPage(r *http.Request) bool {
	if mode := r.Header.Get("Sec-Fetch-Mode"); mode != "" && mode != "navigate" {
		return false
	}
	u, err := url.Parse(r.Referer())
	if err != nil || r.Referer() == "" || !strings.EqualFold(u.Host, r.Host) {
		return false
	}
	return !fromNotebook(r)
}

// refuseNotFromPortal answers a sudo-guarded form that did not come from a
// portal page: 403 with what to do, the form's fields not carried over.
func (h *Handler) refuseNotFromPortal(c *gin.Context) {
	r := c.Request
	h.log.Warn("sudo-guarded form not from a portal page refused", "method", r.Method, "path", r.URL.Path,
		"referer", r.Referer(), "sec_fetch_mode", r.Header.Get("Sec-Fetch-Mode"), "user", currentUser(c).Username)
	msg := i18n.T(r.Context(), "This change needs your password, and it did not come from one of the portal's pages (a notebook's script can send such a request), so it was not made. Open the page in the portal and make the change there.")
	h.render(c, http.StatusForbidden, templates.ErrorPage(h.page(c, i18n.T(r.Context(), "Error")), http.StatusForbidden, msg))
	c.Abort()
}
