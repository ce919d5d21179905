package web_test

import (
	"bytes"
	"context"
	"encoding/json"
	"io"
	"net"
	"net/http"
	"net/http/httputil"
	"net/url"
	"os"
	"path/filepath"
	"regexp"
	"sync"
	"testing"
	"time"

	"github.com/docker/docker/api/types/container"
	"github.com/docker/docker/client"
)

// engineTap sits between a portal process and the Docker engine (the
// portal's DOCKER_HOST points at it) and passes everything through, except
// that just before the portal removes a container it reads the container's
// exit time from the engine itself (inspect's FinishedAt), and it keeps the
// exit times in the engine's answers to the portal's inspects. An audit can
// then check the charge of a removed container against the engine's own
// record, not against what the portal says it read.
type engineTap struct {
	mu    sync.Mutex
	exits map[string]tapExit // container id → FinishedAt as the engine last reported it
}

// tapExit is an exit time the engine reported, and to whom.
type tapExit struct {
	at  time.Time
	how string
}

// removePath is the engine's DELETE /containers/{id} (any API version).
var removePath = regexp.MustCompile(`^(?:/v[0-9.]+)?/containers/([^/]+)$`)

// inspectPath is the engine's GET /containers/{id}/json.
var inspectPath = regexp.MustCompile(`^(?:/v[0-9.]+)?/containers/[^/]+/json$`)

// startEngineTap starts the tap in front of cli's engine and returns it
// with the DOCKER_HOST that reaches it.
func startEngineTap(t *testing.T, cli *client.Client) (*engineTap, string) {
	t.Helper()
	u, err := url.Parse(cli.DaemonHost())
	if err != nil {
		t.Fatal(err)
	}
	network, addr := "unix", u.Path
	if u.Scheme == "tcp" {
		network, addr = "tcp", u.Host
	}
	// A short path: a unix socket's name is limited to about 100 bytes.
	dir, err := os.MkdirTemp("", "tap")
	if err != nil {
		t.Fatal(err)
	}
	sock := filepath.Join(dir, "docker.sock")
	ln, err := net.Listen("unix", sock)
	if err != nil {
		t.Fatal(err)
	}
	tap := &engineTap{exits: map[string]tapExit{}}
	rp := &httputil.ReverseProxy{
		Rewrite: func(pr *httputil.ProxyRequest) {
			pr.Out.URL.Scheme, pr.Out.URL.Host, pr.Out.Host = "http", "docker", "docker"
		},
		Transport: &http.Transport{DialContext: func(ctx context.Context, _, _ string) (net.Conn, error) {
			var d net.Dialer
			return d.DialContext(ctx, network, addr)
		}},
		FlushInterval: -1, // the event stream flows as it comes
		// The engine's answers to the portal's inspects are read too: a
		// container removed behind the portal's back (docker rm -f kills
		// and removes at once) may have been inspected between its exit and
		// its removal, and that answer is the engine's own exit time.
		ModifyResponse: func(resp *http.Response) error {
			if resp.Request.Method != http.MethodGet || resp.StatusCode != http.StatusOK || !inspectPath.MatchString(resp.Request.URL.Path) {
				return nil
			}
			body, err := io.ReadAll(resp.Body)
			resp.Body.Close()
			resp.Body = io.NopCloser(bytes.NewReader(body))
			if err != nil {
				return err
			}
			var info container.InspectResponse
			if json.Unmarshal(body, &info) == nil && info.ContainerJSONBase != nil {
				tap.record(info, "the engine's answer to a portal inspect")
			}
			return nil
		},
	}
	srv := &http.Server{Handler: http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if m := removePath.FindStringSubmatch(r.URL.Path); m != nil && r.Method == http.MethodDelete {
			tap.read(r.Context(), cli, m[1])
		}
		rp.ServeHTTP(w, r)
	})}
	go func() { _ = srv.Serve(ln) }()
	t.Cleanup(func() {
		_ = srv.Close()
		_ = os.RemoveAll(dir)
	})
	return tap, "unix://" + sock
}

// read records id's exit time, when it has exited.
func (tap *engineTap) read(ctx context.Context, cli *client.Client, id string) {
	info, err := cli.ContainerInspect(ctx, id)
	if err == nil {
		tap.record(info, "inspect before removal")
	}
}

// record keeps the exit time of an inspected container that has exited.
func (tap *engineTap) record(info container.InspectResponse, how string) {
	if info.ContainerJSONBase == nil || info.State == nil || info.State.Running {
		return
	}
	at, err := time.Parse(time.RFC3339Nano, info.State.FinishedAt)
	if err != nil || at.Year() < 2000 {
		return
	}
	tap.mu.Lock()
	defer tap.mu.Unlock()
	// The read just before removal is the one the audit names; an answer
	// to a portal inspect that lands after it carries the same time.
	if prev, ok := tap.exits[info.ID]; ok && prev.how == "inspect before removal" {
		return
	}
	tap.exits[info.ID] = tapExit{at.UTC(), how}
}

// finished is container id's exit time as the engine last reported it
// through the tap: read just before the portal removed it, or in the
// engine's answer to an inspect of the portal's.
func (tap *engineTap) finished(id string) (tapExit, bool) {
	tap.mu.Lock()
	defer tap.mu.Unlock()
	e, ok := tap.exits[id]
	return e, ok
}
