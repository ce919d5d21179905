// RealJupyter builds with debootstrap, so it only exists on Linux.

//go:build linux

package testimages

import (
	"bytes"
	"context"
	"crypto/rand"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/coder/websocket"
	"github.com/docker/docker/api/types/container"
	"github.com/docker/docker/client"
	"github.com/docker/docker/pkg/stdcopy"
)

// TestRealJupyterKernelExecute proves the Debian-built image is a working
// Jupyter for the portal's proxy tests: it starts the server with the
// catalog start command, authenticates the way the proxy does (token in the
// Authorization header), starts a kernel and evaluates code over the kernel
// channels WebSocket.
//
// The first run builds the image with debootstrap (root, apt mirror, several
// minutes); the image is cached in the engine by a tag derived from the
// build script, so later runs start in seconds. Run the first time with
// `go test -timeout 30m`: the default 10-minute test timeout may be too short.
func TestRealJupyterKernelExecute(t *testing.T) {
	if testing.Short() {
		t.Skip("real-engine test: skipped under -short (make test runs it)")
	}
	// Budget for a cold debootstrap build plus the test itself, clipped to
	// the go test deadline so a timeout reports here with context instead of
	// as a panic dump.
	budget := 25 * time.Minute
	if dl, ok := t.Deadline(); ok {
		if left := time.Until(dl) - 30*time.Second; left < budget {
			budget = left
		}
	}
	ctx, cancel := context.WithTimeout(t.Context(), budget)
	defer cancel()

	cli, err := client.NewClientWithOpts(client.FromEnv, client.WithAPIVersionNegotiation())
	if err != nil {
		t.Skipf("skipping: no Docker client (%v); this test needs a local Docker engine", err)
	}
	t.Cleanup(func() { cli.Close() })
	if _, err := cli.Info(ctx); err != nil {
		t.Skipf("skipping: docker info failed (%v); this test needs a local Docker engine", err)
	}

	ref, err := RealJupyter(ctx, cli)
	if err != nil {
		t.Fatalf("RealJupyter: %v", err)
	}

	const port = 8888
	const baseURL = "/wb/test1/"
	token := rjRandomHex(t, 24)
	cmd := rjExpandStartCommand(RealJupyterStartCommand, port, baseURL, token)

	// Harden the container the way the portal does (no capabilities,
	// no-new-privileges), so the test also proves the image needs neither.
	created, err := cli.ContainerCreate(ctx,
		&container.Config{
			Image:  ref,
			Cmd:    cmd,
			Labels: map[string]string{"workbench.test": "1"},
		},
		&container.HostConfig{
			CapDrop:     []string{"ALL"},
			SecurityOpt: []string{"no-new-privileges"},
		},
		nil, nil, "")
	if err != nil {
		t.Fatalf("creating container: %v", err)
	}
	id := created.ID
	t.Cleanup(func() {
		// A fresh context: the test's own may already be cancelled.
		cctx, ccancel := context.WithTimeout(context.Background(), time.Minute)
		defer ccancel()
		if t.Failed() {
			t.Logf("container logs:\n%s", rjContainerLogs(cctx, cli, id))
		}
		if err := cli.ContainerRemove(cctx, id, container.RemoveOptions{Force: true}); err != nil {
			t.Errorf("removing container %s: %v", id, err)
		}
	})
	if err := cli.ContainerStart(ctx, id, container.StartOptions{}); err != nil {
		t.Fatalf("starting container: %v", err)
	}

	ip := rjBridgeIP(ctx, t, cli, id)
	base := fmt.Sprintf("http://%s:%d%s", ip, port, baseURL)
	// What the portal's proxy forwards: the injected token, and the
	// browser's Origin, which is the portal's and never the container's, so
	// this also proves allow_origin lets proxied API calls and WebSocket
	// upgrades through.
	auth := http.Header{
		"Authorization": {"token " + token},
		"Origin":        {"https://portal.example"},
	}
	hc := &http.Client{Timeout: 10 * time.Second}

	rjWaitForStatus(ctx, t, cli, hc, id, base+"api/status", auth)

	// The token must be what lets us in; a server that answers without it
	// would make the proxy's token injection untested.
	if code, body := rjDo(ctx, t, hc, http.MethodGet, base+"api/status", nil, nil); code != http.StatusForbidden {
		t.Fatalf("GET api/status without token: status %d, want 403; body %s", code, body)
	}

	// The portal's culler reads last_activity from api/status and asks with
	// no_track_activity so that asking does not count (jupyter_server's
	// rule, which the fake image copies): check this Jupyter keeps it.
	lastActivity := func() string {
		code, body := rjDo(ctx, t, hc, http.MethodGet, base+"api/status", auth, nil)
		var st struct {
			LastActivity string `json:"last_activity"`
		}
		if code != http.StatusOK || json.Unmarshal(body, &st) != nil || st.LastActivity == "" {
			t.Fatalf("GET api/status: %d %s", code, body)
		}
		return st.LastActivity
	}
	before := lastActivity()
	time.Sleep(20 * time.Millisecond)
	if code, body := rjDo(ctx, t, hc, http.MethodGet, base+"api/kernels?no_track_activity=1", auth, nil); code != http.StatusOK {
		t.Fatalf("GET api/kernels?no_track_activity=1: %d %s", code, body)
	}
	if after := lastActivity(); after != before {
		t.Fatalf("last_activity moved from %s to %s on requests that ask not to be tracked", before, after)
	}
	if code, body := rjDo(ctx, t, hc, http.MethodGet, base+"api/kernels", auth, nil); code != http.StatusOK {
		t.Fatalf("GET api/kernels: %d %s", code, body)
	}
	if after := lastActivity(); after == before {
		t.Fatalf("last_activity still %s after a tracked API request", after)
	}

	code, body := rjDo(ctx, t, hc, http.MethodPost, base+"api/kernels", auth, []byte(`{"name":"python3"}`))
	if code != http.StatusCreated {
		t.Fatalf("POST api/kernels: status %d, want 201; body %s", code, body)
	}
	var kernel struct {
		ID   string `json:"id"`
		Name string `json:"name"`
	}
	if err := json.Unmarshal(body, &kernel); err != nil || kernel.ID == "" {
		t.Fatalf("POST api/kernels: bad body %s (%v)", body, err)
	}

	wsURL := fmt.Sprintf("ws://%s:%d%sapi/kernels/%s/channels", ip, port, baseURL, kernel.ID)
	conn, resp, err := websocket.Dial(ctx, wsURL, &websocket.DialOptions{HTTPHeader: auth})
	if err != nil {
		status := 0
		if resp != nil {
			status = resp.StatusCode
		}
		t.Fatalf("dialing %s: %v (HTTP status %d)", wsURL, err, status)
	}
	defer conn.CloseNow()
	// Kernel replies carry the whole execution state; the 32 KiB default
	// read limit is for untrusted peers.
	conn.SetReadLimit(16 << 20)

	msgID := rjRandomHex(t, 16)
	req := map[string]any{
		"header": map[string]any{
			"msg_id":   msgID,
			"session":  rjRandomHex(t, 16),
			"username": "workbench-test",
			"msg_type": "execute_request",
			"version":  "5.3",
			"date":     time.Now().UTC().Format(time.RFC3339Nano),
		},
		"parent_header": map[string]any{},
		"metadata":      map[string]any{},
		"content": map[string]any{
			"code":             "5*4",
			"silent":           false,
			"store_history":    true,
			"user_expressions": map[string]any{},
			"allow_stdin":      false,
			"stop_on_error":    true,
		},
		"buffers": []any{},
		"channel": "shell",
	}
	raw, err := json.Marshal(req)
	if err != nil {
		t.Fatal(err)
	}
	if err := conn.Write(ctx, websocket.MessageText, raw); err != nil {
		t.Fatalf("sending execute_request: %v", err)
	}

	// Bound the wait on the kernel separately: a kernel that never answers
	// should fail in a minute, not after the whole build budget.
	rctx, rcancel := context.WithTimeout(ctx, 2*time.Minute)
	defer rcancel()
	for {
		typ, data, err := conn.Read(rctx)
		if err != nil {
			t.Fatalf("reading kernel messages (no execute_result for %s yet): %v", msgID, err)
		}
		if typ != websocket.MessageText {
			// Notebook 6 uses binary frames only for messages with buffers
			// (widgets); an execute of 5*4 never produces one.
			continue
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
			continue // status/kernel_info traffic of the connection itself
		}
		switch m.Header.MsgType {
		case "error":
			t.Fatalf("kernel reported an error: %s", m.Content)
		case "execute_reply":
			var c struct {
				Status string `json:"status"`
			}
			if err := json.Unmarshal(m.Content, &c); err != nil || c.Status != "ok" {
				t.Fatalf("execute_reply not ok: %s", m.Content)
			}
			// The reply may overtake the iopub result; keep reading.
		case "execute_result":
			var c struct {
				Data map[string]any `json:"data"`
			}
			if err := json.Unmarshal(m.Content, &c); err != nil {
				t.Fatalf("execute_result content %s: %v", m.Content, err)
			}
			if got := c.Data["text/plain"]; got != "20" {
				t.Fatalf("execute_result text/plain = %#v, want \"20\" (content %s)", got, m.Content)
			}
			if m.Channel != "iopub" {
				t.Errorf("execute_result on channel %q, want iopub", m.Channel)
			}
			conn.Close(websocket.StatusNormalClosure, "")
			return
		}
	}
}

// rjExpandStartCommand does what the portal does with a catalog start command:
// substitute the placeholders and split into argv (no shell involved).
func rjExpandStartCommand(tmpl string, port int, baseURL, token string) []string {
	s := strings.NewReplacer("{port}", strconv.Itoa(port), "{base_url}", baseURL, "{token}", token).Replace(tmpl)
	return strings.Fields(s)
}

// rjBridgeIP returns the container's address on the default bridge; the test
// process is on the host, which routes to it directly, so no port
// publishing (and no host port collisions) is needed.
func rjBridgeIP(ctx context.Context, t *testing.T, cli client.APIClient, id string) string {
	t.Helper()
	info, err := cli.ContainerInspect(ctx, id)
	if err != nil {
		t.Fatalf("inspecting container: %v", err)
	}
	if info.NetworkSettings != nil {
		for _, n := range info.NetworkSettings.Networks {
			if n != nil && n.IPAddress != "" {
				return n.IPAddress
			}
		}
	}
	t.Fatalf("container %s has no bridge IP", id)
	return ""
}

// rjWaitForStatus polls until Jupyter answers 200, failing early if the
// container exits (a bad flag makes Notebook quit at once, and waiting out
// the timeout would only hide that).
func rjWaitForStatus(ctx context.Context, t *testing.T, cli client.APIClient, hc *http.Client, id, url string, auth http.Header) {
	t.Helper()
	wctx, cancel := context.WithTimeout(ctx, 2*time.Minute)
	defer cancel()
	var last string
	for {
		req, err := http.NewRequestWithContext(wctx, http.MethodGet, url, nil)
		if err != nil {
			t.Fatal(err)
		}
		req.Header = auth.Clone()
		resp, err := hc.Do(req)
		if err == nil {
			body, _ := io.ReadAll(resp.Body)
			resp.Body.Close()
			if resp.StatusCode == http.StatusOK {
				return
			}
			last = fmt.Sprintf("status %d: %s", resp.StatusCode, body)
		} else {
			last = err.Error()
		}
		if info, err := cli.ContainerInspect(wctx, id); err == nil && info.State != nil && !info.State.Running {
			t.Fatalf("container exited (code %d) before Jupyter answered; last attempt: %s", info.State.ExitCode, last)
		}
		select {
		case <-wctx.Done():
			t.Fatalf("Jupyter did not answer 200 on %s: %v; last attempt: %s", url, wctx.Err(), last)
		case <-time.After(250 * time.Millisecond):
		}
	}
}

// rjDo sends one request and returns the status and body.
func rjDo(ctx context.Context, t *testing.T, hc *http.Client, method, url string, h http.Header, body []byte) (int, []byte) {
	t.Helper()
	req, err := http.NewRequestWithContext(ctx, method, url, bytes.NewReader(body))
	if err != nil {
		t.Fatal(err)
	}
	if h != nil {
		req.Header = h.Clone()
	}
	if body != nil {
		req.Header.Set("Content-Type", "application/json")
	}
	resp, err := hc.Do(req)
	if err != nil {
		t.Fatalf("%s %s: %v", method, url, err)
	}
	defer resp.Body.Close()
	b, err := io.ReadAll(resp.Body)
	if err != nil {
		t.Fatalf("%s %s: reading body: %v", method, url, err)
	}
	return resp.StatusCode, b
}

// rjContainerLogs returns stdout and stderr of the container, for failure
// reports: Jupyter explains most refusals only in its log.
func rjContainerLogs(ctx context.Context, cli client.APIClient, id string) string {
	rc, err := cli.ContainerLogs(ctx, id, container.LogsOptions{ShowStdout: true, ShowStderr: true, Tail: "200"})
	if err != nil {
		return "(logs unavailable: " + err.Error() + ")"
	}
	defer rc.Close()
	var out bytes.Buffer
	if _, err := stdcopy.StdCopy(&out, &out, rc); err != nil {
		fmt.Fprintf(&out, "\n(reading logs: %v)", err)
	}
	return out.String()
}

func rjRandomHex(t *testing.T, n int) string {
	t.Helper()
	b := make([]byte, n)
	if _, err := rand.Read(b); err != nil {
		t.Fatal(err)
	}
	return hex.EncodeToString(b)
}
