package main

import (
	"context"
	"encoding/json"
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/coder/websocket"
)

const testToken = "s3cret"

func newTestServer(t *testing.T) string {
	t.Helper()
	t.Setenv("HOME", t.TempDir())
	srv := httptest.NewServer(newServer("/wb/abc/", testToken, slog.New(slog.DiscardHandler)))
	t.Cleanup(srv.Close)
	return srv.URL + "/wb/abc/"
}

func do(t *testing.T, method, url, auth, body string) (int, string) {
	t.Helper()
	req, _ := http.NewRequest(method, url, strings.NewReader(body))
	if auth != "" {
		req.Header.Set("Authorization", auth)
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	return resp.StatusCode, string(b)
}

func TestTokenRequiredEverywhere(t *testing.T) {
	base := newTestServer(t)
	for _, u := range []string{base + "lab", base + "api/status", base + "nope", base + "api/status?token=wrong"} {
		if code, _ := do(t, "GET", u, "", ""); code != http.StatusForbidden {
			t.Errorf("GET %s without token: %d, want 403", u, code)
		}
	}
	if code, _ := do(t, "GET", base+"api/status", "token wrong", ""); code != http.StatusForbidden {
		t.Errorf("wrong header token: %d, want 403", code)
	}
	if code, body := do(t, "GET", base+"lab?token="+testToken, "", ""); code != 200 || !strings.Contains(body, "Fake JupyterLab") {
		t.Errorf("lab with query token: %d %q", code, body)
	}
	if code, _ := do(t, "GET", base, "token "+testToken, ""); code != 200 {
		t.Errorf("base with header token: %d", code)
	}
	if code, _ := do(t, "GET", strings.TrimSuffix(base, "wb/abc/")+"api/status", "token "+testToken, ""); code != http.StatusNotFound {
		t.Errorf("outside base url: %d, want 404", code)
	}
}

func TestKernelsStatusHeadersHome(t *testing.T) {
	base := newTestServer(t)
	auth := "token " + testToken
	code, body := do(t, "POST", base+"api/kernels", auth, "{}")
	if code != http.StatusCreated {
		t.Fatalf("create kernel: %d %s", code, body)
	}
	_, body = do(t, "GET", base+"api/kernels", auth, "")
	var ks []kernel
	if err := json.Unmarshal([]byte(body), &ks); err != nil || len(ks) != 1 || ks[0].ExecutionState != "idle" {
		t.Fatalf("kernels = %s (%v)", body, err)
	}
	_, body = do(t, "GET", base+"api/status", auth, "")
	var st struct{ Kernels, Connections int }
	if err := json.Unmarshal([]byte(body), &st); err != nil || st.Kernels != 1 {
		t.Fatalf("status = %s (%v)", body, err)
	}
	_, body = do(t, "GET", base+"api/echo-headers", auth, "")
	if !strings.Contains(body, `"Authorization":["token s3cret"]`) {
		t.Errorf("echo-headers = %s", body)
	}
	if code, _ := do(t, "POST", base+"api/homefile?name=x.txt", auth, "hello"); code != http.StatusNoContent {
		t.Fatalf("write homefile: %d", code)
	}
	if code, body := do(t, "GET", base+"api/homefile?name=x.txt", auth, ""); code != 200 || body != "hello" {
		t.Errorf("read homefile: %d %q", code, body)
	}
	if code, _ := do(t, "GET", base+"api/homefile?name=../etc", auth, ""); code != http.StatusBadRequest {
		t.Errorf("path escape: %d, want 400", code)
	}
	_, body = do(t, "GET", base+"api/selfcheck?probe=127.0.0.1:1", auth, "")
	var sc selfcheck
	if err := json.Unmarshal([]byte(body), &sc); err != nil || sc.Probe == nil || sc.Probe.Reachable || sc.CapEff == "" {
		t.Errorf("selfcheck = %s (%v)", body, err)
	}
}

func TestWebSockets(t *testing.T) {
	base := newTestServer(t)
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	wsBase := "ws" + strings.TrimPrefix(base, "http")
	hdr := http.Header{"Authorization": {"token " + testToken}}

	c, _, err := websocket.Dial(ctx, wsBase+"api/ws-echo", &websocket.DialOptions{HTTPHeader: hdr})
	if err != nil {
		t.Fatal(err)
	}
	_ = c.Write(ctx, websocket.MessageText, []byte("ping"))
	if _, msg, err := c.Read(ctx); err != nil || string(msg) != "ping" {
		t.Fatalf("echo: %q %v", msg, err)
	}
	c.Close(websocket.StatusNormalClosure, "")

	_, body := do(t, "POST", base+"api/kernels", "token "+testToken, "{}")
	var k kernel
	_ = json.Unmarshal([]byte(body), &k)
	c, _, err = websocket.Dial(ctx, wsBase+"api/kernels/"+k.ID+"/channels?token="+testToken, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer c.CloseNow()
	req := `{"header":{"msg_id":"1","msg_type":"execute_request","session":"s"},"parent_header":{},"metadata":{},"content":{"code":"1+1"},"channel":"shell"}`
	_ = c.Write(ctx, websocket.MessageText, []byte(req))
	for {
		_, msg, err := c.Read(ctx)
		if err != nil {
			t.Fatal(err)
		}
		var m jmsg
		_ = json.Unmarshal(msg, &m)
		if m.Header["msg_type"] == "execute_result" {
			data, _ := m.Content["data"].(map[string]any)
			if data["text/plain"] != "echo: 1+1" {
				t.Errorf("result %v", m.Content)
			}
		}
		if m.Header["msg_type"] == "execute_reply" {
			break
		}
	}
}

// Like jupyter_server, /api/status and requests marked no_track_activity
// leave last_activity alone; other API requests move it.
func TestActivityTrackingRules(t *testing.T) {
	base := newTestServer(t)
	auth := "token " + testToken
	lastActivity := func() string {
		code, body := do(t, "GET", base+"api/status", auth, "")
		var st struct {
			LastActivity string `json:"last_activity"`
		}
		if code != 200 || json.Unmarshal([]byte(body), &st) != nil {
			t.Fatalf("status: %d %q", code, body)
		}
		return st.LastActivity
	}
	before := lastActivity()
	time.Sleep(5 * time.Millisecond)
	if code, _ := do(t, "GET", base+"api/kernels?no_track_activity=1", auth, ""); code != 200 {
		t.Fatalf("kernels: %d", code)
	}
	if got := lastActivity(); got != before {
		t.Fatalf("last_activity moved from %s to %s on untracked requests", before, got)
	}
	if code, _ := do(t, "GET", base+"api/kernels", auth, ""); code != 200 {
		t.Fatalf("kernels: %d", code)
	}
	if got := lastActivity(); got == before {
		t.Fatalf("last_activity still %s after a tracked request", got)
	}
}

func TestLargeBody(t *testing.T) {
	base := newTestServer(t)
	code, body := do(t, "GET", base+"api/large", "token "+testToken, "")
	if code != http.StatusOK || len(body) != largeBodySize {
		t.Fatalf("GET api/large: %d with %d bytes, want 200 with %d", code, len(body), largeBodySize)
	}
	if body[:3] != "abc" || body[26:29] != "abc" {
		t.Errorf("GET api/large: body starts %q, want the alphabet repeated", body[:29])
	}
	if code, _ := do(t, "GET", base+"api/large", "", ""); code != http.StatusForbidden {
		t.Errorf("GET api/large without token: %d, want 403", code)
	}
}

// --ready-file holds the fake back: waitForFile does not return true
// while the file is missing, returns true once it exists, and false when
// the container is stopped first.
func TestWaitForFile(t *testing.T) {
	log := slog.New(slog.NewTextHandler(io.Discard, nil))
	path := filepath.Join(t.TempDir(), "gate")

	// Missing: only the end of the context (a stop) ends the wait.
	ctx, cancel := context.WithTimeout(context.Background(), 200*time.Millisecond)
	defer cancel()
	if waitForFile(ctx, path, log) {
		t.Fatal("waitForFile reported a file that does not exist")
	}

	done := make(chan bool, 1)
	go func() { done <- waitForFile(context.Background(), path, log) }()
	if err := os.WriteFile(path, nil, 0o644); err != nil {
		t.Fatal(err)
	}
	if !<-done {
		t.Fatal("waitForFile reported a stop, want the file found")
	}
}
