package web

import (
	"crypto/sha256"
	"crypto/subtle"
	"io"
	"net/http"
	"strings"

	"github.com/gin-gonic/gin"
	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/collectors"
	"github.com/prometheus/client_golang/prometheus/promhttp"

	"workbench/handlers"
	"workbench/orchestrator"
)

// mountMetrics decides where /metrics is served and who may read it. The
// figures say little, but enough (users' workbench counts, GPU use, the
// portal's memory) that anonymous readers are not welcome:
//
//   - WORKBENCH_METRICS_ADDR set: only on that separate listen address (e.g.
//     127.0.0.1:9090 or an internal interface), never on the portal's own;
//     with WORKBENCH_METRICS_TOKEN also set, that address asks for it too;
//   - else WORKBENCH_METRICS_TOKEN set: on the portal, for requests with
//     "Authorization: Bearer <token>";
//   - neither (the default): on the portal, for admins only (an admin
//     session, or an admin's API token as the bearer).
//
// It returns the handler for the separate address (nil when there is none).
func (s *Server) mountMetrics(mux *http.ServeMux, r *gin.Engine, h *handlers.Handler) http.Handler {
	reg := prometheus.NewRegistry()
	reg.MustRegister(collectors.NewGoCollector(), collectors.NewProcessCollector(collectors.ProcessCollectorOpts{}),
		orchestrator.NewCollector(s.Manager), s.proxyMetrics)
	var mh http.Handler = promhttp.HandlerFor(reg, promhttp.HandlerOpts{})
	if s.cfg.MetricsToken != "" {
		mh = bearerOnly(s.cfg.MetricsToken, mh)
	}
	switch {
	case s.cfg.MetricsAddr != "":
		own := http.NewServeMux()
		own.Handle("GET /metrics", mh)
		return own
	case s.cfg.MetricsToken != "":
		mux.Handle("GET /metrics", mh)
	default:
		r.GET("/metrics", h.AdminOnly(mh)) // gin: after the session and API-token middleware
	}
	return nil
}

// bearerOnly serves next only to requests carrying the token.
func bearerOnly(token string, next http.Handler) http.Handler {
	want := sha256.Sum256([]byte(token))
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		got, ok := handlers.BearerSecret(r.Header.Get("Authorization"))
		sum := sha256.Sum256([]byte(strings.TrimSpace(got)))
		if !ok || subtle.ConstantTimeCompare(sum[:], want[:]) != 1 {
			w.Header().Set("WWW-Authenticate", `Bearer realm="workbench metrics"`)
			w.Header().Set("Content-Type", "application/json")
			w.WriteHeader(http.StatusUnauthorized)
			io.WriteString(w, `{"error":{"code":"unauthorized","message":"send Authorization: Bearer <WORKBENCH_METRICS_TOKEN>"}}`)
			return
		}
		next.ServeHTTP(w, r)
	})
}
