//go:build linux

// testimages.RealJupyter builds with debootstrap, so it exists on Linux only.

package web_test

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"encoding/json"
	"io"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/coder/websocket"
)

// TestRealJupyterKernelThroughPortal is the product's promise with a real
// Jupyter Notebook server: launched through the API, a kernel created
// through the proxy, and code evaluated over the kernel channels WebSocket
// opened through the portal with the user's session cookie.
func TestRealJupyterKernelThroughPortal(t *testing.T) {
	p, _ := realJupyterPortal(t)
	ctx := t.Context()

	alice := tokenFor(t, p, "alice", "user")
	code, wb := p.api("POST", "/api/v1/workbenches", alice, `{"name":"real","image":"jupyter","flavor":"CPU small"}`)
	if code != http.StatusAccepted {
		t.Fatalf("launch: %d %v", code, wb)
	}
	id := wb["id"].(string)
	start := time.Now()
	waitState(t, p, alice, id, "running")
	t.Logf("real Jupyter running %s after launch", time.Since(start).Round(10*time.Millisecond))

	ac := p.client()
	p.login(ac, "alice", "alice-password")
	base := "/wb/" + id + "/"

	// Create a kernel through the proxy, as JupyterLab in the browser would.
	req, _ := http.NewRequestWithContext(ctx, http.MethodPost, p.ts.URL+base+"api/kernels", strings.NewReader(`{"name":"python3"}`))
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("Origin", p.ts.URL)
	res, err := ac.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	body, _ := io.ReadAll(res.Body)
	res.Body.Close()
	var kernel struct {
		ID string `json:"id"`
	}
	if res.StatusCode != http.StatusCreated || json.Unmarshal(body, &kernel) != nil || kernel.ID == "" {
		t.Fatalf("create kernel through the portal: %d %s", res.StatusCode, body)
	}

	// The kernel channels, through the portal: the session cookie from the
	// jar authenticates, the proxy injects the Jupyter token.
	wsURL := "ws" + strings.TrimPrefix(p.ts.URL, "http") + base + "api/kernels/" + kernel.ID + "/channels"
	conn, res, err := websocket.Dial(ctx, wsURL, &websocket.DialOptions{HTTPClient: ac, HTTPHeader: http.Header{"Origin": {p.ts.URL}}})
	if err != nil {
		t.Fatalf("kernel channels through the portal: %v (HTTP %d)", err, statusOf(res))
	}
	defer conn.CloseNow()
	// Kernel messages carry whole execution state; the 32 KiB default read
	// limit is meant for untrusted peers.
	conn.SetReadLimit(16 << 20)

	msgID := rjHex(t)
	raw, _ := json.Marshal(map[string]any{
		"header": map[string]any{
			"msg_id": msgID, "session": rjHex(t), "username": "alice", "msg_type": "execute_request",
			"version": "5.3", "date": time.Now().UTC().Format(time.RFC3339Nano),
		},
		"parent_header": map[string]any{},
		"metadata":      map[string]any{},
		"content": map[string]any{
			"code": "5*4", "silent": false, "store_history": true, "user_expressions": map[string]any{},
			"allow_stdin": false, "stop_on_error": true,
		},
		"buffers": []any{},
		"channel": "shell",
	})
	if err := conn.Write(ctx, websocket.MessageText, raw); err != nil {
		t.Fatalf("send execute_request: %v", err)
	}

	// A kernel that never answers should fail in a minute, not after the
	// build budget.
	rctx, rcancel := context.WithTimeout(ctx, 2*time.Minute)
	defer rcancel()
	for {
		typ, data, err := conn.Read(rctx)
		if err != nil {
			t.Fatalf("no execute_result for 5*4: %v", err)
		}
		if typ != websocket.MessageText {
			continue // binary frames carry buffers (widgets); 5*4 has none
		}
		var m struct {
			Channel string `json:"channel"`
			Header  struct {
				MsgType string `json:"msg_type"`
			} `json:"header"`
			ParentHeader struct {
				MsgID string `json:"msg_id"`
			} `json:"parent_header"`
			Content json.RawMessage `json:"content"`
		}
		if err := json.Unmarshal(data, &m); err != nil {
			t.Fatalf("undecodable kernel message %q: %v", data, err)
		}
		if m.ParentHeader.MsgID != msgID {
			continue // status traffic of the connection itself
		}
		switch m.Header.MsgType {
		case "error":
			t.Fatalf("kernel error: %s", m.Content)
		case "execute_result":
			var c struct {
				Data map[string]any `json:"data"`
			}
			if err := json.Unmarshal(m.Content, &c); err != nil || c.Data["text/plain"] != "20" {
				t.Fatalf("execute_result = %s, want text/plain \"20\"", m.Content)
			}
			t.Logf("5*4 = %v through the portal, %s after launch", c.Data["text/plain"], time.Since(start).Round(10*time.Millisecond))
			conn.Close(websocket.StatusNormalClosure, "")
			return
		}
		// execute_reply may overtake the iopub result; keep reading.
	}
}

func rjHex(t *testing.T) string {
	t.Helper()
	b := make([]byte, 16)
	if _, err := rand.Read(b); err != nil {
		t.Fatal(err)
	}
	return hex.EncodeToString(b)
}
