package web_test

import (
	"context"
	"encoding/json"
	"io"
	"net"
	"net/http"
	"net/url"
	"strings"
	"testing"
	"time"

	"github.com/docker/docker/client"

	"workbench/internal/testsupport/testimages"
	"workbench/models"
	"workbench/web"
)

// dockerClient returns an engine client or skips with an explicit message
// (and fails under CI, which must provide an engine).
func dockerClient(t testing.TB) *client.Client {
	t.Helper()
	if testing.Short() {
		t.Skip("real-engine test: skipped under -short (make test runs it)")
	}
	cli, err := client.NewClientWithOpts(client.FromEnv, client.WithAPIVersionNegotiation())
	if err == nil {
		_, err = cli.Ping(context.Background())
	}
	if err != nil {
		msg := "these tests need a Docker engine (docker info failed: " + err.Error() + ")"
		if testingCI() {
			t.Fatal(msg)
		}
		t.Skip(msg)
	}
	t.Cleanup(func() { cli.Close() })
	return cli
}

func testingCI() bool { return strings.TrimSpace(getenv("CI")) != "" }

// cleanupInstall removes every container, volume and network a portal
// instance created, by its install label.
func cleanupInstall(t *testing.T, cli *client.Client, installID string) {
	t.Cleanup(func() { removeInstallObjects(cli, installID) })
}

// enginePortal starts a portal on the real engine with the fake Jupyter
// image in its catalog as "fake".
func enginePortal(t *testing.T, mutate ...func(*web.Config)) (*testPortal, *client.Client) {
	t.Helper()
	cli := dockerClient(t)
	ref := fakeJupyterImage(t)
	p := newPortal(t, mutate...)
	id, _ := p.srv.Store.InstallID(context.Background())
	cleanupInstall(t, cli, id)
	p.addImage(fakeCatalogImage("fake", ref))
	return p, cli
}

// realJupyterPortal is enginePortal with the real Jupyter Notebook image
// in the catalog as "jupyter" too.
func realJupyterPortal(t *testing.T, mutate ...func(*web.Config)) (*testPortal, *client.Client) {
	t.Helper()
	p, cli := enginePortal(t, mutate...)
	p.addImage(realCatalogImage("jupyter", realJupyterImage(t)))
	return p, cli
}

// fakeCatalogImage is a catalog entry that runs the fake Jupyter image ref.
func fakeCatalogImage(name, ref string) *models.Image {
	return &models.Image{Name: name, Image: ref, StartCommand: testimages.FakeJupyterStartCommand,
		RunAsUser: "1000", HomePath: testimages.FakeJupyterHome, Enabled: true}
}

// realCatalogImage is a catalog entry that runs the real Jupyter image ref
// (or an image built on it).
func realCatalogImage(name, ref string) *models.Image {
	return &models.Image{Name: name, Image: ref, StartCommand: testimages.RealJupyterStartCommand,
		RunAsUser: testimages.RealJupyterUser, HomePath: testimages.RealJupyterHome, Enabled: true}
}

// addImage puts img in the portal's catalog.
func (p *testPortal) addImage(img *models.Image) *models.Image {
	p.t.Helper()
	if err := p.srv.Store.CreateImage(context.Background(), img); err != nil {
		p.t.Fatalf("add catalog image %s: %v", img.Name, err)
	}
	return img
}

// catalogJSON is img as POST /api/v1/images takes it (for portals that run
// as a process, where the store is not at hand).
func catalogJSON(img *models.Image) string {
	b, _ := json.Marshal(map[string]string{"name": img.Name, "image": img.Image, "start_command": img.StartCommand,
		"run_as_user": img.RunAsUser, "home_path": img.HomePath})
	return string(b)
}

// serveSSH serves the portal's SSH gate on a loopback port until the test
// ends, and returns the port.
func (p *testPortal) serveSSH() string {
	p.t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		p.t.Fatal(err)
	}
	ctx, stop := context.WithCancel(context.Background())
	served := make(chan error, 1)
	go func() { served <- p.srv.SSH().Serve(ctx, ln) }()
	p.t.Cleanup(func() { stop(); <-served })
	_, port, _ := net.SplitHostPort(ln.Addr().String())
	return port
}

// waitState polls the API until the workbench reaches want (or failed).
func waitState(t *testing.T, p *testPortal, token, id, want string) map[string]any {
	t.Helper()
	deadline := time.Now().Add(3 * time.Minute)
	for {
		code, wb := p.api("GET", "/api/v1/workbenches/"+id, token, "")
		if code != 200 {
			t.Fatalf("get workbench: %d %v", code, wb)
		}
		if wb["state"] == want {
			return wb
		}
		if wb["state"] == "failed" && want != "failed" {
			t.Fatalf("workbench failed: %v", wb["reason"])
		}
		if time.Now().After(deadline) {
			t.Fatalf("workbench stuck in %v (want %s)", wb["state"], want)
		}
		time.Sleep(100 * time.Millisecond)
	}
}

func TestWorkbenchLifecycleThroughPortal(t *testing.T) {
	p, _ := enginePortal(t)
	ctx := context.Background()
	alice := tokenFor(t, p, "alice", "user")
	tokenFor(t, p, "bob", "user")

	code, wb := p.api("POST", "/api/v1/workbenches", alice, `{"name":"exp1","image":"fake","flavor":"1x H100 80GB HBM3"}`)
	if code != 202 {
		t.Fatalf("launch: %d %v", code, wb)
	}
	id := wb["id"].(string)
	for _, k := range []string{"id", "name", "owner", "state", "image", "flavor", "gpus", "url", "reason"} {
		if _, ok := wb[k]; !ok {
			t.Errorf("workbench JSON lacks %q", k)
		}
	}
	wb = waitState(t, p, alice, id, "running")
	gpus := wb["gpus"].([]any)
	if len(gpus) != 1 || wb["owner"] != "alice" || !strings.HasSuffix(wb["url"].(string), "/wb/"+id+"/lab") {
		t.Fatalf("running workbench: %v", wb)
	}

	// The owner reaches Jupyter through the proxy with her session.
	ac := p.client()
	p.login(ac, "alice", "alice-password")
	res, body := p.get(ac, "/wb/"+id+"/lab")
	if res.StatusCode != 200 || !strings.Contains(body, "Fake JupyterLab") {
		t.Fatalf("proxied lab: %d %q", res.StatusCode, body)
	}
	if res.Header.Get("Set-Cookie") != "" {
		t.Fatalf("proxied response sets a cookie: %q", res.Header.Get("Set-Cookie"))
	}
	// What Jupyter received: the token, not the portal's session cookie.
	_, echoed := p.get(ac, "/wb/"+id+"/api/echo-headers")
	if strings.Contains(echoed, web.SessionCookieName) || !strings.Contains(echoed, "token ") {
		t.Fatalf("headers seen by Jupyter: %s", echoed)
	}
	// Another user, and an admin, get 404 for the same path.
	bc := p.client()
	p.login(bc, "bob", "bob-password")
	if res, _ := p.get(bc, "/wb/"+id+"/lab"); res.StatusCode != 404 {
		t.Fatalf("bob reached alice's notebook: %d", res.StatusCode)
	}
	adm := p.client()
	p.login(adm, "admin", adminPassword)
	if res, _ := p.get(adm, "/wb/"+id+"/lab"); res.StatusCode != 404 {
		t.Fatalf("admin reached alice's notebook: %d", res.StatusCode)
	}
	bobTok := tokenFor(t, p, "bob", "user")
	if code, _ := p.api("GET", "/api/v1/workbenches/"+id, bobTok, ""); code != 404 {
		t.Fatalf("bob read alice's workbench: %d", code)
	}
	if code, _ := p.api("POST", "/api/v1/workbenches/"+id+"/stop", bobTok, ""); code != 404 {
		t.Fatalf("bob stopped alice's workbench: %d", code)
	}

	// Write a file in the home volume, stop, start again, read it back.
	req, _ := http.NewRequest("POST", p.ts.URL+"/wb/"+id+"/api/homefile?name=notes.txt", strings.NewReader("keep me"))
	req.Header.Set("Origin", p.ts.URL)
	if res, err := ac.Do(req); err != nil || res.StatusCode >= 300 {
		t.Fatalf("write home file: %v %v", res.StatusCode, err)
	}
	if code, _ := p.api("POST", "/api/v1/workbenches/"+id+"/stop", alice, ""); code != 200 {
		t.Fatalf("stop: %d", code)
	}
	wb = waitState(t, p, alice, id, "stopped")
	if len(wb["gpus"].([]any)) != 0 {
		t.Fatalf("GPUs still bound after stop: %v", wb["gpus"])
	}
	gpuList, _ := p.srv.Store.GPUAllocations(ctx)
	if len(gpuList) != 0 {
		t.Fatalf("allocations after stop: %v", gpuList)
	}
	if res, _ := p.get(ac, "/wb/"+id+"/lab"); res.StatusCode != 503 {
		t.Fatalf("stopped workbench through proxy: %d, want 503", res.StatusCode)
	}
	if code, _ := p.api("POST", "/api/v1/workbenches/"+id+"/start", alice, ""); code != 200 {
		t.Fatalf("start: %d", code)
	}
	waitState(t, p, alice, id, "running")
	res, body = p.get(ac, "/wb/"+id+"/api/homefile?name=notes.txt")
	if res.StatusCode != 200 || body != "keep me" {
		t.Fatalf("home file after restart: %d %q", res.StatusCode, body)
	}

	// Delete: a running workbench is stopped first by the user.
	p.api("POST", "/api/v1/workbenches/"+id+"/stop", alice, "")
	waitState(t, p, alice, id, "stopped")
	if code, _ := p.api("DELETE", "/api/v1/workbenches/"+id, alice, ""); code != 204 {
		t.Fatalf("delete: %d", code)
	}
	if code, _ := p.api("GET", "/api/v1/workbenches/"+id, alice, ""); code != 404 {
		t.Fatalf("deleted workbench still visible: %d", code)
	}
}

func TestLaunchRefusals(t *testing.T) {
	p, _ := enginePortal(t)
	alice := tokenFor(t, p, "alice", "user")
	cases := []struct{ body, code string }{
		{`{"name":"x","image":"nope","flavor":"CPU small"}`, "invalid_image"},
		{`{"name":"x","image":"fake","flavor":"nope"}`, "invalid_flavor"},
		{`{"name":"bad/name","image":"fake","flavor":"CPU small"}`, "invalid_name"},
		{`{"name":"x","image":"fake","flavor":"CPU small","idle_timeout_seconds":5}`, "invalid_idle_timeout"},
	}
	for _, c := range cases {
		if code, body := p.api("POST", "/api/v1/workbenches", alice, c.body); code != 400 || errCode(body) != c.code {
			t.Errorf("%s: %d %v, want 400 %s", c.body, code, body, c.code)
		}
	}
	// 8x H100 takes every GPU; the next GPU launch is refused with what is free.
	code, big := p.api("POST", "/api/v1/workbenches", alice, `{"name":"big","image":"fake","flavor":"8x H100 80GB HBM3"}`)
	if code != 202 {
		t.Fatalf("8-GPU launch: %d %v", code, big)
	}
	code, body := p.api("POST", "/api/v1/workbenches", alice, `{"name":"one","image":"fake","flavor":"1x H100 80GB HBM3"}`)
	if code != 409 || errCode(body) != "no_capacity" || !strings.Contains(body["error"].(map[string]any)["message"].(string), "0 free") {
		t.Fatalf("over capacity: %d %v", code, body)
	}
	// CPU-only flavors still launch.
	if code, body := p.api("POST", "/api/v1/workbenches", alice, `{"name":"cpu","image":"fake","flavor":"CPU small"}`); code != 202 {
		t.Fatalf("CPU launch: %d %v", code, body)
	}
	waitState(t, p, alice, big["id"].(string), "running")
	p.srv.Manager.Wait()
}

func getenv(k string) string {
	v, _ := lookupEnv(k)
	return v
}

var _ = io.Discard

// TestEventsStream reads the SSE stream while the connection stays open: the
// first event must arrive without waiting for the handler to return (this
// fails if any writer in the chain buffers).
func TestEventsStream(t *testing.T) {
	p, _ := enginePortal(t)
	alice := tokenFor(t, p, "alice", "user")
	code, wb := p.api("POST", "/api/v1/workbenches", alice, `{"name":"sse","image":"fake","flavor":"CPU small"}`)
	if code != 202 {
		t.Fatalf("launch: %d %v", code, wb)
	}
	id := wb["id"].(string)
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	req, _ := http.NewRequestWithContext(ctx, "GET", p.ts.URL+"/api/v1/workbenches/"+id+"/events", nil)
	req.Header.Set("Authorization", "Bearer "+alice)
	res, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer res.Body.Close()
	if ct := res.Header.Get("Content-Type"); ct != "text/event-stream" {
		t.Fatalf("content type %q", ct)
	}
	// Read events until the stream reports running; each arrives on its own.
	buf := make([]byte, 4096)
	var seen string
	for !strings.Contains(seen, `"state":"running"`) {
		n, err := res.Body.Read(buf)
		if err != nil {
			t.Fatalf("stream ended before running (%v); got:\n%s", err, seen)
		}
		seen += string(buf[:n])
	}
	if !strings.HasPrefix(seen, "event: state\ndata: {") {
		t.Fatalf("not SSE framing: %q", seen)
	}
	// Another user cannot subscribe.
	bob := tokenFor(t, p, "bob", "user")
	if code, _ := p.api("GET", "/api/v1/workbenches/"+id+"/events", bob, ""); code != 404 {
		t.Fatalf("bob subscribed to alice's events: %d", code)
	}
	p.srv.Manager.Wait()
}

// TestLogsStream follows a workbench's log over HTTP: the output written so
// far arrives while the connection stays open.
func TestLogsStream(t *testing.T) {
	p, _ := enginePortal(t)
	alice := tokenFor(t, p, "alice", "user")
	_, wb := p.api("POST", "/api/v1/workbenches", alice, `{"name":"logs","image":"fake","flavor":"CPU small"}`)
	id := wb["id"].(string)
	waitState(t, p, alice, id, "running")
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	req, _ := http.NewRequestWithContext(ctx, "GET", p.ts.URL+"/api/v1/workbenches/"+id+"/logs?follow=true&tail=100", nil)
	req.Header.Set("Authorization", "Bearer "+alice)
	res, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer res.Body.Close()
	buf := make([]byte, 8192)
	n, err := res.Body.Read(buf)
	if err != nil || n == 0 || !strings.Contains(res.Header.Get("Content-Type"), "text/plain") {
		t.Fatalf("no log output while following: %d bytes, %v", n, err)
	}
	p.srv.Manager.Wait()
}

// TestLogoutEndsNotebookAccessAtOnce: the proxy caches session lookups
// briefly; logging out must still cut the notebook off immediately.
func TestLogoutEndsNotebookAccessAtOnce(t *testing.T) {
	p, _ := enginePortal(t)
	alice := tokenFor(t, p, "alice", "user")
	_, wb := p.api("POST", "/api/v1/workbenches", alice, `{"name":"nb","image":"fake","flavor":"CPU small"}`)
	id := wb["id"].(string)
	waitState(t, p, alice, id, "running")
	ac := p.client()
	p.login(ac, "alice", "alice-password")
	if res, _ := p.get(ac, "/wb/"+id+"/lab"); res.StatusCode != 200 {
		t.Fatalf("before logout: %d", res.StatusCode)
	}
	u, _ := url.Parse(p.ts.URL)
	stolen := ac.Jar.Cookies(u)
	p.postForm(ac, "/logout", nil)
	replay := p.client()
	replay.Jar.SetCookies(u, stolen)
	if res, _ := p.get(replay, "/wb/"+id+"/lab"); res.StatusCode != 404 {
		t.Fatalf("notebook reachable with a logged-out session: %d", res.StatusCode)
	}
	// Stopping cuts it off at once too (the route cache is dropped).
	p.login(ac, "alice", "alice-password")
	p.get(ac, "/wb/"+id+"/lab")
	p.api("POST", "/api/v1/workbenches/"+id+"/stop", alice, "")
	if res, _ := p.get(ac, "/wb/"+id+"/lab"); res.StatusCode != 503 {
		t.Fatalf("stopped workbench through the proxy: %d, want 503", res.StatusCode)
	}
	p.srv.Manager.Wait()
}
