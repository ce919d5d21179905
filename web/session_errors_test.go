package web

import (
	"bytes"
	"context"
	"errors"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/alexedwards/scs/v2"
	"github.com/alexedwards/scs/v2/memstore"
)

// failingCommit is a session store whose saves fail (the database gone, or
// the request's context cancelled while saving).
type failingCommit struct {
	*memstore.MemStore
	err error
}

func (f failingCommit) Commit(string, []byte, time.Time) error { return f.err }

// headerCounter counts WriteHeader calls reaching the server's writer: a
// second one is what net/http logs as "superfluous response.WriteHeader".
type headerCounter struct {
	*httptest.ResponseRecorder
	calls int
}

func (h *headerCounter) WriteHeader(code int) {
	h.calls++
	h.ResponseRecorder.WriteHeader(code)
}

func (h *headerCounter) Write(b []byte) (int, error) {
	if h.calls == 0 {
		h.WriteHeader(http.StatusOK)
	}
	return h.ResponseRecorder.Write(b)
}

func TestSessionSaveFailureWritesOneHeader(t *testing.T) {
	for _, tc := range []struct {
		name      string
		err       error
		cancel    bool
		write     bool
		status    int
		logged    string
		notLogged string
	}{
		{name: "store error while the handler writes", err: errors.New("database is closed"), write: true, status: http.StatusTeapot, logged: "level=ERROR msg=\"session not saved\""},
		{name: "client gone while the handler writes", err: context.Canceled, cancel: true, write: true, status: http.StatusTeapot, notLogged: "ERROR"},
		{name: "store error, handler wrote nothing", err: errors.New("database is closed"), status: http.StatusInternalServerError, logged: "level=ERROR"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			var logs bytes.Buffer
			log := slog.New(slog.NewTextHandler(&logs, &slog.HandlerOptions{Level: slog.LevelDebug}))
			sm := scs.New()
			sm.Store = failingCommit{memstore.New(), tc.err}
			sm.ErrorFunc = sessionErrorFunc(log)
			h := withSessions(sm, http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
				sm.Put(r.Context(), "k", "v") // modified: scs saves it
				if tc.write {
					w.WriteHeader(http.StatusTeapot)
					_, _ = w.Write([]byte("handler's answer"))
				}
			}))
			req := httptest.NewRequest("GET", "/", nil)
			if tc.cancel {
				ctx, cancel := context.WithCancel(req.Context())
				cancel()
				req = req.WithContext(ctx)
			}
			rec := &headerCounter{ResponseRecorder: httptest.NewRecorder()}
			h.ServeHTTP(rec, req)
			if rec.calls != 1 {
				t.Errorf("WriteHeader reached the server %d times, want 1", rec.calls)
			}
			if rec.Code != tc.status {
				t.Errorf("status %d, want %d", rec.Code, tc.status)
			}
			if tc.write && rec.Body.String() != "handler's answer" {
				t.Errorf("body %q: want the handler's answer alone", rec.Body.String())
			}
			if tc.logged != "" && !strings.Contains(logs.String(), tc.logged) {
				t.Errorf("log %q lacks %q", logs.String(), tc.logged)
			}
			if tc.notLogged != "" && strings.Contains(logs.String(), tc.notLogged) {
				t.Errorf("log %q has %q", logs.String(), tc.notLogged)
			}
		})
	}
}

// TestAccessLogQuietForAbandonedRequests: a 5xx no client received (its
// request cancelled) is not a warning; one a client received is.
func TestAccessLogQuietForAbandonedRequests(t *testing.T) {
	var logs bytes.Buffer
	log := slog.New(slog.NewTextHandler(&logs, &slog.HandlerOptions{Level: slog.LevelInfo}))
	h := accessLog(log, http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) { w.WriteHeader(http.StatusBadGateway) }))
	req := httptest.NewRequest("GET", "/wb/x/", nil)
	ctx, cancel := context.WithCancel(req.Context())
	cancel()
	h.ServeHTTP(httptest.NewRecorder(), req.WithContext(ctx))
	if logs.Len() != 0 {
		t.Fatalf("abandoned 502 logged: %q", logs.String())
	}
	h.ServeHTTP(httptest.NewRecorder(), httptest.NewRequest("GET", "/wb/x/", nil))
	if !strings.Contains(logs.String(), "level=WARN") {
		t.Fatalf("a 502 a client received is not a warning: %q", logs.String())
	}
}

// The notebook tab of a stopped workbench answers 503 with its "not
// running" page: a normal answer, not a warning; a 503 elsewhere is one.
func TestAccessLogQuietForTheNotRunningPage(t *testing.T) {
	var logs bytes.Buffer
	log := slog.New(slog.NewTextHandler(&logs, &slog.HandlerOptions{Level: slog.LevelInfo}))
	h := accessLog(log, http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) { w.WriteHeader(http.StatusServiceUnavailable) }))
	h.ServeHTTP(httptest.NewRecorder(), httptest.NewRequest("GET", "/wb/x/tree", nil))
	if logs.Len() != 0 {
		t.Fatalf("the not-running page logged: %q", logs.String())
	}
	h.ServeHTTP(httptest.NewRecorder(), httptest.NewRequest("GET", "/api/v1/workbenches", nil))
	if !strings.Contains(logs.String(), "level=WARN") {
		t.Fatalf("a 503 of the API is not a warning: %q", logs.String())
	}
}
