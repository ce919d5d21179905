package handlers

import (
	"net/http"
	"net/url"
	"strings"

	"github.com/gin-gonic/gin"
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
// of the portal outside /wb/, as a navigation where the browser says. The
// portal's host is the request's, or WORKBENCH_PUBLIC_URL's where a
// reverse proxy in front rewrites Host.
func (h *Handler) fromPortalPage(r *http.Request) bool {
	if mode := r.Header.Get("Sec-Fetch-Mode"); mode != "" && mode != "navigate" {
		return false
	}
	u, err := url.Parse(r.Referer())
	if err != nil || r.Referer() == "" {
		return false
	}
	if !strings.EqualFold(u.Host, r.Host) {
		pub, err := url.Parse(h.cfg.PublicURL)
		if err != nil || h.cfg.PublicURL == "" || !strings.EqualFold(u.Host, pub.Host) {
			return false
		}
	}
	return !notebookPath(u)
}

// notFromPortalMessage is the refusal of such a form (translated on the
// error page through pageMessages).
const notFromPortalMessage = "This change needs your password, and it did not come from one of the portal's pages (a notebook's script can send such a request), so it was not made. Open the page in the portal and make the change there."

// refuseNotFromPortal answers a sudo-guarded form that did not come from a
// portal page: 403 with what to do, the form's fields not carried over.
func (h *Handler) refuseNotFromPortal(c *gin.Context) {
	r := c.Request
	h.log.Warn("sudo-guarded form not from a portal page", "referer", r.Referer(), "sec_fetch_mode", r.Header.Get("Sec-Fetch-Mode"),
		"user", currentUser(c).Username)
	h.fail(c, newError(http.StatusForbidden, "not_from_portal", notFromPortalMessage))
}
