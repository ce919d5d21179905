package handlers

import (
	"net/http"

	"workbench/handlers/proxy"
	"workbench/models"
	"workbench/templates"
	"workbench/templates/i18n"
)

// ProxyNotFound is the page a browser gets at /wb/{id}/… when the caller
// has no such workbench: deleted (an old bookmark of a notebook), never
// there, or someone else's. The three read the same, so an id cannot be
// probed (orchestrator's ProxyTarget already answers them alike). It is
// the portal's own not-found page, with the layout and a way back to the
// user's workbenches, where the proxy's bare "Not found" left them stuck.
func (h *Handler) ProxyNotFound(w http.ResponseWriter, r *http.Request) {
	var u *models.User
	// Without a session (a malformed address, or a request the proxy does
	// not send to sign in) the page has no navigation, as the login page.
	if e, err := h.proxyUser(r); err == nil {
		if u, err = h.store.UserByID(r.Context(), e.userID); err != nil {
			h.log.Warn("not-found page: user", "user", e.userID, "err", err)
			u = nil
		}
	}
	h.notFoundPage(w, r, u)
}

// notFoundPage writes the portal's 404 page for a workbench address
// outside the gin router (the proxy, the notebook-host opener), for u
// (nil: signed out).
func (h *Handler) notFoundPage(w http.ResponseWriter, r *http.Request, u *models.User) {
	ctx := i18n.WithLocale(r.Context(), requestLocale(r, u))
	p := h.pageFor(ctx, r, u, i18n.T(ctx, "Not found")) // the top bar and banner of every portal page
	portalPageHeaders(w, i18n.FromContext(ctx).Lang())
	w.WriteHeader(http.StatusNotFound)
	msg := i18n.T(ctx, "There is no such workbench: it may have been deleted, or the link is out of date. Open it again from your list of workbenches.")
	if err := templates.ErrorPage(p, http.StatusNotFound, msg).Render(ctx, w); err != nil {
		if !proxy.ClientGone(r, err) {
			h.log.Error("render not-found page", "path", r.URL.Path, "err", err)
		}
	}
}

// portalPageHeaders sets the headers of the portal's own pages served
// under /wb/ (not running, not found), where web's securityHeaders leaves
// the policy to Jupyter: as every portal page, the portal's policy and
// framed by no one (a sibling host's page, same site so the session
// cookie goes along, could frame it and take a click on Start); never
// cached.
func portalPageHeaders(w http.ResponseWriter, lang string) {
	hd := w.Header()
	hd.Set("Content-Type", "text/html; charset=utf-8")
	hd.Set("Content-Language", lang)
	hd.Set("Cache-Control", "no-store")
	// Its forms (Start, Log out, the language switch) must not be taken
	// for a notebook's requests (refuseFromNotebook goes by the Referer's
	// path), so it sends only its origin. Not "no-referrer": Chromium then
	// posts "Origin: null", which the CSRF check refuses where no Fetch
	// Metadata is sent (plain HTTP on a host name): Start and Log out
	// failed there.
	hd.Set("Referrer-Policy", "strict-origin")
	hd.Set("Content-Security-Policy", PortalContentSecurityPolicy)
	hd.Set("X-Frame-Options", "DENY")
	hd.Set("Cross-Origin-Opener-Policy", "same-origin")
}
