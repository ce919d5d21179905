//go:build linux

package web_test

import (
	"context"
	"encoding/json"
	"io"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/coder/websocket"
)

// TestWorkbenchTokenRealKernel is programmatic access as VS Code's Jupyter
// extension or a jupyter client does it, against a real Jupyter Notebook
// server: with only a workbench token (no cookie, no Origin) a client lists
// files over the REST API with "Authorization: token …", starts a kernel
// and runs code over the kernel WebSocket with ?token=; the same token is
// refused on the owner's other workbench, REST and WebSocket alike. A
// Python client (jupyter_client's Session over tornado) does the same from
// a container.
func TestWorkbenchTokenRealKernel(t *testing.T) {
	p, cli := realJupyterPortal(t)
	ref := realJupyterImage(t)
	ctx := t.Context()
	alice := tokenFor(t, p, "alice", "user")
	launch := func(name string) string {
		code, wb := p.api("POST", "/api/v1/workbenches", alice, `{"name":"`+name+`","image":"jupyter","flavor":"CPU small"}`)
		if code != http.StatusAccepted {
			t.Fatalf("launch %s: %d %v", name, code, wb)
		}
		return wb["id"].(string)
	}
	a, b := launch("a"), launch("b")
	waitState(t, p, alice, a, "running")
	waitState(t, p, alice, b, "running")

	code, out := p.api("POST", "/api/v1/workbenches/"+a+"/tokens", alice, `{"name":"vscode","expires_days":7}`)
	if code != http.StatusCreated {
		t.Fatalf("create workbench token: %d %v", code, out)
	}
	tok, server := out["token"].(string), out["server_url"].(string)

	// What VS Code does first: the contents API with the header.
	rest := func(method, url, body string) (int, []byte) {
		req, _ := http.NewRequestWithContext(ctx, method, url, strings.NewReader(body))
		req.Header.Set("Authorization", "token "+tok)
		if body != "" {
			req.Header.Set("Content-Type", "application/json")
		}
		res, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		defer res.Body.Close()
		b, _ := io.ReadAll(res.Body)
		return res.StatusCode, b
	}
	if code, body := rest(http.MethodGet, server+"api/contents", ""); code != http.StatusOK || !strings.Contains(string(body), `"type": "directory"`) && !strings.Contains(string(body), `"type":"directory"`) {
		t.Fatalf("GET api/contents with the token: %d %.300s", code, body)
	}
	if code, body := rest(http.MethodPut, server+"api/contents/hello.txt", `{"type":"file","format":"text","content":"hi"}`); code != http.StatusCreated && code != http.StatusOK {
		t.Fatalf("PUT api/contents with the token: %d %.300s", code, body)
	}
	bServer := strings.Replace(server, "/wb/"+a+"/", "/wb/"+b+"/", 1)
	if code, _ := rest(http.MethodGet, bServer+"api/contents", ""); code != http.StatusForbidden {
		t.Fatalf("A's token on B's contents: %d, want 403", code)
	}

	// A kernel, started over REST, and code run over its WebSocket with
	// ?token= as jupyter clients send it.
	code, body := rest(http.MethodPost, server+"api/kernels", `{"name":"python3"}`)
	var kernel struct {
		ID string `json:"id"`
	}
	if code != http.StatusCreated || json.Unmarshal(body, &kernel) != nil || kernel.ID == "" {
		t.Fatalf("start kernel with the token: %d %s", code, body)
	}
	wsURL := "ws" + strings.TrimPrefix(server, "http") + "api/kernels/" + kernel.ID + "/channels?token=" + tok
	bWS := strings.Replace(wsURL, "/wb/"+a+"/", "/wb/"+b+"/", 1)
	if _, res, err := websocket.Dial(ctx, bWS, nil); err == nil || statusOf(res) != http.StatusForbidden {
		t.Fatalf("A's token on B's kernel channels: %v %d, want 403", err, statusOf(res))
	}
	conn, res, err := websocket.Dial(ctx, wsURL, nil)
	if err != nil {
		t.Fatalf("kernel channels with ?token=: %v (HTTP %d)", err, statusOf(res))
	}
	defer conn.CloseNow()
	conn.SetReadLimit(16 << 20)
	got := runOnKernel(t, ctx, conn, "open('hello.txt').read() * 3")
	if got != "'hihihi'" {
		t.Fatalf("execute_result %q, want 'hihihi'", got)
	}
	conn.Close(websocket.StatusNormalClosure, "")

	// The same from Python with jupyter_client's Session and tornado, as
	// a script outside the portal would: it works with A's token and is
	// refused on B.
	pyOut, exit := runPyJupyterClient(t, ctx, cli, ref, server, tok)
	if exit != 0 || !strings.Contains(pyOut, "RESULT 42") {
		t.Fatalf("Python Jupyter client through the proxy: exit %d\n%s", exit, pyOut)
	}
	pyOut, exit = runPyJupyterClient(t, ctx, cli, ref, bServer, tok)
	if exit == 0 || !strings.Contains(pyOut, "403") {
		t.Fatalf("Python Jupyter client with A's token on B: exit %d\n%s", exit, pyOut)
	}
}

// runOnKernel sends one execute_request on a kernel channels WebSocket and
// returns the text/plain of its execute_result.
func runOnKernel(t *testing.T, ctx context.Context, conn *websocket.Conn, code string) string {
	t.Helper()
	msgID := rjHex(t)
	raw, _ := json.Marshal(map[string]any{
		"header": map[string]any{"msg_id": msgID, "session": rjHex(t), "username": "vscode", "msg_type": "execute_request",
			"version": "5.3", "date": time.Now().UTC().Format(time.RFC3339Nano)},
		"parent_header": map[string]any{}, "metadata": map[string]any{},
		"content": map[string]any{"code": code, "silent": false, "store_history": true, "user_expressions": map[string]any{},
			"allow_stdin": false, "stop_on_error": true},
		"buffers": []any{}, "channel": "shell",
	})
	if err := conn.Write(ctx, websocket.MessageText, raw); err != nil {
		t.Fatalf("send execute_request: %v", err)
	}
	rctx, cancel := context.WithTimeout(ctx, 2*time.Minute)
	defer cancel()
	for {
		typ, data, err := conn.Read(rctx)
		if err != nil {
			t.Fatalf("no execute_result: %v", err)
		}
		if typ != websocket.MessageText {
			continue
		}
		var m struct {
			Header struct {
				MsgType string `json:"msg_type"`
			} `json:"header"`
			ParentHeader struct {
				MsgID string `json:"msg_id"`
			} `json:"parent_header"`
			Content json.RawMessage `json:"content"`
		}
		if json.Unmarshal(data, &m) != nil || m.ParentHeader.MsgID != msgID {
			continue
		}
		switch m.Header.MsgType {
		case "error":
			t.Fatalf("kernel error: %s", m.Content)
		case "execute_result":
			var c struct {
				Data map[string]any `json:"data"`
			}
			_ = json.Unmarshal(m.Content, &c)
			s, _ := c.Data["text/plain"].(string)
			return s
		}
	}
}
