package handlers

import (
	"io"
	"net/http"
	"strings"

	"workbench/templates"
	"workbench/templates/i18n"
)

// CrossOriginRefused answers a state change that CrossOriginProtection
// refused (no Origin or Sec-Fetch-Site of the portal). A script or an API
// client gets JSON; a person's browser gets a page in their language, for
// the refusal they meet is a form sent again from a page the browser no
// longer vouches for (Back to a page it had to drop, then Reload: Chrome
// resends the form with "Origin: null"), which nothing changed, and raw
// JSON would read as a crash.
func (h *Handler) CrossOriginRefused(w http.ResponseWriter, r *http.Request) {
	h.log.Warn("cross-origin request refused", "method", r.Method, "path", r.URL.Path, "origin", r.Header.Get("Origin"))
	if strings.HasPrefix(r.URL.Path, "/api/") || !strings.Contains(r.Header.Get("Accept"), "text/html") {
		w.Header().Set("Content-Type", "application/json")
		w.WriteHeader(http.StatusForbidden)
		io.WriteString(w, `{"error":{"code":"cross_origin","message":"cross-origin request refused"}}`)
		return
	}
	ctx := i18n.WithLocale(r.Context(), requestLocale(r, nil))
	w.Header().Set("Content-Type", "text/html; charset=utf-8")
	w.Header().Set("Content-Language", i18n.FromContext(ctx).Lang())
	w.Header().Set("Cache-Control", "no-store")
	w.WriteHeader(http.StatusForbidden)
	p := templates.Page{Title: i18n.T(ctx, "Form not sent"), Path: r.URL.Path, Here: "/", Version: h.cfg.Version}
	msg := i18n.T(ctx, "This form came from a page your browser no longer vouches for (for example a form sent again after Back and Reload), so nothing was changed. Open the page again and send the form from there.")
	if err := templates.ErrorPage(p, http.StatusForbidden, msg).Render(ctx, w); err != nil {
		h.log.Error("render cross-origin page", "err", err)
	}
}
