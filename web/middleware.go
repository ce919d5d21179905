package web

import (
	"log/slog"
	"net/http"
	"strings"
	"time"

	"workbench/handlers"
)

// portalCSP is the portal pages' policy. With notebook hosts, a form may
// also end on one: signing in from a notebook's bookmark posts the login
// form, whose redirects end on {id}.<domain> (the code exchange), and
// Chromium holds a form's redirects to form-action: the sign-in stopped on
// a blank login page.
func portalCSP(notebookDomain string) string {
	if notebookDomain == "" {
		return handlers.PortalContentSecurityPolicy
	}
	return strings.Replace(handlers.PortalContentSecurityPolicy, "form-action 'self'", "form-action 'self' *."+notebookDomain+":*", 1)
}

// securityHeaders sets the portal's security headers (csp: portalCSP).
// Proxied Jupyter paths keep Jupyter's own policy: JupyterLab needs inline
// scripts and styles.
func securityHeaders(secure bool, csp string, next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		h := w.Header()
		h.Set("X-Content-Type-Options", "nosniff")
		h.Set("Referrer-Policy", "same-origin")
		if !strings.HasPrefix(r.URL.Path, "/wb/") {
			h.Set("Content-Security-Policy", csp)
			h.Set("X-Frame-Options", "DENY")
			h.Set("Cross-Origin-Opener-Policy", "same-origin")
		}
		if secure {
			h.Set("Strict-Transport-Security", "max-age=31536000")
		}
		next.ServeHTTP(w, r)
	})
}

// statusRecorder captures the status code for the access log.
type statusRecorder struct {
	http.ResponseWriter
	status int
}

func (s *statusRecorder) WriteHeader(code int) {
	if s.status == 0 {
		s.status = code
	}
	s.ResponseWriter.WriteHeader(code)
}

func (s *statusRecorder) Write(b []byte) (int, error) {
	if s.status == 0 {
		s.status = http.StatusOK
	}
	return s.ResponseWriter.Write(b)
}

// Unwrap lets http.ResponseController reach Flush and Hijack (SSE, WebSocket).
func (s *statusRecorder) Unwrap() http.ResponseWriter { return s.ResponseWriter }

// accessLog logs each request at debug level (info for errors).
func accessLog(log *slog.Logger, next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		start := time.Now()
		rec := &statusRecorder{ResponseWriter: w}
		next.ServeHTTP(rec, r)
		level := slog.LevelDebug
		// A 5xx is worth a warning only if a client received it: one
		// that went away got nothing (the handlers record 499 then). A
		// 503 under /wb/ says the workbench is not running (the notebook
		// tab's page, or its plain-text form for scripts): a normal
		// answer for a stopped workbench, which made every visit a
		// warning. The page's own failures log their warning.
		if rec.status >= 500 && r.Context().Err() == nil &&
			(rec.status != http.StatusServiceUnavailable || !strings.HasPrefix(r.URL.Path, "/wb/")) {
			level = slog.LevelWarn
		}
		// Asked first: building the arguments boxes four values per
		// request, for a line that is off unless debugging (issue 15,
		// the proxy's hot path).
		if !log.Enabled(r.Context(), level) {
			return
		}
		log.Log(r.Context(), level, "http", "method", r.Method, "path", r.URL.Path, "status", rec.status, "took", time.Since(start))
	})
}
