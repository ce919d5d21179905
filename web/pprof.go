package web

import (
	"net/http"
	"net/http/pprof"

	"workbench/handlers"
)

// pprofHandler serves Go's profiler (/debug/pprof/…) for
// WORKBENCH_PPROF_ADDR, to admins' API tokens only. It is off unless that
// address is set, and never on the portal's own address: a profile shows
// request paths and timings, and a CPU profile costs the server while it
// runs. Use: curl -H "Authorization: Bearer $TOKEN" \
// http://127.0.0.1:6060/debug/pprof/profile?seconds=20 > cpu.out
func pprofHandler(h *handlers.Handler) http.Handler {
	mux := http.NewServeMux()
	mux.HandleFunc("/debug/pprof/", pprof.Index)
	mux.HandleFunc("/debug/pprof/cmdline", pprof.Cmdline)
	mux.HandleFunc("/debug/pprof/profile", pprof.Profile)
	mux.HandleFunc("/debug/pprof/symbol", pprof.Symbol)
	mux.HandleFunc("/debug/pprof/trace", pprof.Trace)
	return h.AdminTokenOnly(mux)
}
