package main

import (
	"crypto/subtle"
	"encoding/json"
	"log/slog"
	"net/http"
	"strings"
	"sync"
	"sync/atomic"
	"time"
)

// server holds the fake's state: its kernels and activity counters.
type server struct {
	base    string
	token   string
	log     *slog.Logger
	mux     *http.ServeMux
	started time.Time

	mu           sync.Mutex
	kernels      map[string]*kernel
	lastActivity time.Time

	connections atomic.Int64  // open WebSockets
	pingEvery   time.Duration // kernel WebSocket keep-alive pings (0: none)
}

func newServer(base, token string, log *slog.Logger) *server {
	now := time.Now().UTC()
	s := &server{base: base, token: token, log: log, started: now, lastActivity: now, kernels: map[string]*kernel{}}
	mux := http.NewServeMux()
	b := base
	mux.HandleFunc("GET "+b+"{$}", s.handleLab)
	mux.HandleFunc("GET "+b+"lab", s.handleLab)
	mux.HandleFunc("GET "+b+"lab/{rest...}", s.handleLab)
	mux.HandleFunc("GET "+b+"api/status", s.handleStatus)
	mux.HandleFunc("GET "+b+"api/kernels", s.handleListKernels)
	mux.HandleFunc("POST "+b+"api/kernels", s.handleCreateKernel)
	mux.HandleFunc("GET "+b+"api/kernels/{id}", s.handleGetKernel)
	mux.HandleFunc("DELETE "+b+"api/kernels/{id}", s.handleDeleteKernel)
	mux.HandleFunc("GET "+b+"api/kernels/{id}/channels", s.handleChannels)
	mux.HandleFunc("GET "+b+"api/ws-echo", s.handleWSEcho)
	mux.HandleFunc("GET "+b+"api/large", s.handleLarge)
	mux.HandleFunc("GET "+b+"api/echo-headers", s.handleEchoHeaders)
	mux.HandleFunc("GET "+b+"api/selfcheck", s.handleSelfcheck)
	mux.HandleFunc("GET "+b+"api/homefile", s.handleReadHome)
	mux.HandleFunc("POST "+b+"api/homefile", s.handleWriteHome)
	mux.HandleFunc("PUT "+b+"api/homefile", s.handleWriteHome)
	s.mux = mux
	return s
}

// ServeHTTP checks the token before anything else: like Jupyter, every
// path, even a missing one, answers 403 without it.
func (s *server) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	if !s.authorized(r) {
		s.log.Info("forbidden", "method", r.Method, "path", r.URL.Path)
		http.Error(w, "403 Forbidden: missing or wrong token", http.StatusForbidden)
		return
	}
	// Jupyter's own activity rules: /api/status and requests that say
	// no_track_activity do not count (jupyter_server's _track_activity).
	if !strings.HasSuffix(r.URL.Path, "/api/status") && !r.URL.Query().Has("no_track_activity") {
		s.touch()
	}
	s.mux.ServeHTTP(w, r)
}

// authorized accepts the token as ?token= or "Authorization: token X",
// the two forms Jupyter accepts.
func (s *server) authorized(r *http.Request) bool {
	if s.token == "" {
		return true
	}
	got := r.URL.Query().Get("token")
	if h, ok := strings.CutPrefix(r.Header.Get("Authorization"), "token "); ok {
		got = strings.TrimSpace(h)
	}
	return got != "" && subtle.ConstantTimeCompare([]byte(got), []byte(s.token)) == 1
}

func (s *server) touch() {
	s.mu.Lock()
	s.lastActivity = time.Now().UTC()
	s.mu.Unlock()
}

func (s *server) handleLab(w http.ResponseWriter, r *http.Request) {
	w.Header().Set("Content-Type", "text/html; charset=utf-8")
	_, _ = w.Write([]byte(`<!doctype html>
<html><head><meta charset="utf-8"><title>Fake JupyterLab</title></head>
<body><h1>Fake JupyterLab</h1><p>base url: ` + s.base + `</p></body></html>
`))
}

func (s *server) handleStatus(w http.ResponseWriter, r *http.Request) {
	s.mu.Lock()
	resp := map[string]any{
		"started":       s.started.Format(time.RFC3339Nano),
		"last_activity": s.lastActivity.Format(time.RFC3339Nano),
		"connections":   s.connections.Load(),
		"kernels":       len(s.kernels),
	}
	s.mu.Unlock()
	writeJSON(w, http.StatusOK, resp)
}

func (s *server) handleEchoHeaders(w http.ResponseWriter, r *http.Request) {
	h := r.Header.Clone()
	// Go moves Host out of the header map; tests want to see it.
	h.Set("Host", r.Host)
	writeJSON(w, http.StatusOK, h)
}

func writeJSON(w http.ResponseWriter, code int, v any) {
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(code)
	_ = json.NewEncoder(w).Encode(v)
}
