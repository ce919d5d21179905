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
// same-origin). fetch() is not a navigation, and a form script submits
// names the notebook page or nothing — unless the script first rewrites
// its page's address (history.replaceState to /admin/users, same origin
// in path mode): then only the browser's other Fetch Metadata tell it
// apart. A portal page is never framed (frame-ancestors 'none'), so its
// form is a top-level document navigation (Sec-Fetch-Dest: document), not
// one into a hidden iframe; and it is sent by the person's click or key
// (Sec-Fetch-User: ?1), not by a script on its own. What remains — a
// script that waits for a click in the notebook and then navigates the
// tab to the form's result — is visible to the person and is why the
// notebook domain is the real isolation (README, "Security").

// fromPortalPage reports whether an unsafe form request came from a page
// of the portal outside /wb/, as a navigation where the browser says. The
// portal's host is the request's, or WORKBENCH_PUBLIC_URL's where a
// reverse proxy in front rewrites Host.
func (h *Handler) fromPortalPage(r *http.Request) bool {
	// Browsers that send Fetch Metadata send all three on a navigation;
	// one without them (an old browser, a script's HTTP client with the
	// session cookie) is judged by its Referer alone.
	if mode := r.Header.Get("Sec-Fetch-Mode"); mode != "" {
		if mode != "navigate" || r.Header.Get("Sec-Fetch-Dest") != "document" || r.Header.Get("Sec-Fetch-User") != "?1" {
			return false
		}
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
		"sec_fetch_dest", r.Header.Get("Sec-Fetch-Dest"), "sec_fetch_user", r.Header.Get("Sec-Fetch-User"), "user", currentUser(c).Username)
	h.fail(c, newError(http.StatusForbidden, "not_from_portal", notFromPortalMessage))
}
