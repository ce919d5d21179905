package installtest

import (
	"bytes"
	"context"
	"crypto/rand"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"io"
	"log/slog"
	"net"
	"net/http"
	"net/http/cookiejar"
	"net/url"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/docker/docker/api/types/container"
	"github.com/docker/docker/api/types/filters"
	"github.com/docker/docker/api/types/image"
	"github.com/docker/docker/api/types/network"
	"github.com/docker/docker/api/types/volume"
	"github.com/docker/docker/client"

	"workbench/internal/testsupport/testimages"
	"workbench/orchestrator/runtime"
)

func TestComposeInstall(t *testing.T) {
	if testing.Short() || os.Getenv("WORKBENCH_INSTALL_TEST") == "" {
		t.Skip("the compose install test runs under `make test-install` (WORKBENCH_INSTALL_TEST=1): it builds the portal image")
	}
	ctx := context.Background()
	cli, err := client.NewClientWithOpts(client.FromEnv, client.WithAPIVersionNegotiation())
	if err != nil {
		t.Fatal(err)
	}
	defer cli.Close()
	compose := composeCommand(t)
	root := moduleRoot(t)

	runtimeBase, buildBase := baseImages(t, root)
	fake, err := testimages.FakeJupyter(ctx, cli)
	if err != nil {
		t.Fatalf("fake Jupyter image: %v", err)
	}
	goproxy := serveModules(t, cli, root)

	// The project as a user would have it: the tracked files only.
	dir := t.TempDir()
	src := filepath.Join(dir, "src")
	copyTracked(t, root, src)
	suffix := randHex(4)
	project := "wbinstall" + suffix
	portalImage := "workbench-install-test/portal:" + suffix
	addr := freeAddr(t)
	base := "http://" + addr
	password := "install-" + randHex(8)
	env := append(os.Environ(),
		"COMPOSE_PROJECT_NAME="+project,
		"WORKBENCH_IMAGE="+portalImage,
		"WORKBENCH_DATA="+filepath.Join(dir, "data"),
		"WORKBENCH_ADDR="+addr,
		"WORKBENCH_ADMIN_PASSWORD="+password,
		"WORKBENCH_GPUS=none",
		"WORKBENCH_GO_IMAGE="+buildBase,
		"WORKBENCH_RUNTIME_IMAGE="+runtimeBase,
		"WORKBENCH_GOPROXY="+goproxy,
	)
	run := func(args ...string) string {
		t.Helper()
		cmd := exec.Command(compose[0], append(compose[1:], args...)...)
		cmd.Dir, cmd.Env = src, env
		out, err := cmd.CombinedOutput()
		if err != nil {
			t.Fatalf("%s %s: %v\n%s", strings.Join(compose, " "), strings.Join(args, " "), err, tail(out, 6000))
		}
		return string(out)
	}
	var installID string
	t.Cleanup(func() {
		cmd := exec.Command(compose[0], append(compose[1:], "down", "--remove-orphans")...)
		cmd.Dir, cmd.Env = src, env
		_ = cmd.Run()
		if installID != "" {
			removeInstallObjects(cli, installID)
		}
		// Only the tag: its layers stay as the engine's build cache, so the
		// next run compiles just the project's own packages.
		_, _ = cli.ImageRemove(context.Background(), portalImage, image.RemoveOptions{PruneChildren: false})
	})

	// Build with the local bases (no registry), then start.
	run("build")
	noInheritedTestLabel(t, cli, portalImage)
	run("up", "-d")
	waitHealthy(t, base)

	// The image's health check asks the running server (workbench health).
	waitContainerHealthy(t, cli, project)

	// Log in through the form, as a browser would.
	jar, _ := cookiejar.New(nil)
	hc := &http.Client{Jar: jar, Timeout: 30 * time.Second, CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }}
	login(t, hc, base, "admin", password)

	// An API token made by the CLI inside the container.
	token := strings.TrimSpace(run("exec", "-T", "workbench", "workbench", "token", "create", "admin"))
	if len(token) < 20 {
		t.Fatalf("token create printed %q", token)
	}
	api := func(method, path, body string) (int, map[string]any) {
		t.Helper()
		req, _ := http.NewRequest(method, base+path, strings.NewReader(body))
		req.Header.Set("Authorization", "Bearer "+token)
		req.Header.Set("Content-Type", "application/json")
		res, err := hc.Do(req)
		if err != nil {
			t.Fatalf("%s %s: %v", method, path, err)
		}
		defer res.Body.Close()
		var m map[string]any
		_ = json.NewDecoder(res.Body).Decode(&m)
		return res.StatusCode, m
	}
	imgBody, _ := json.Marshal(map[string]any{"name": "fake", "image": fake, "start_command": testimages.FakeJupyterStartCommand,
		"run_as_user": "1000", "home_path": testimages.FakeJupyterHome})
	if code, m := api("POST", "/api/v1/images", string(imgBody)); code != 201 && code != 200 {
		t.Fatalf("add the fake image: %d %v", code, m)
	}
	code, wb := api("POST", "/api/v1/workbenches", `{"name":"compose1","image":"fake","flavor":"CPU small"}`)
	if code != 202 {
		t.Fatalf("launch: %d %v", code, wb)
	}
	id, _ := wb["id"].(string)
	waitRunning := func() {
		t.Helper()
		for start := time.Now(); ; time.Sleep(200 * time.Millisecond) {
			code, wb := api("GET", "/api/v1/workbenches/"+id, "")
			if code == 200 && wb["state"] == "running" {
				return
			}
			if wb["state"] == "failed" {
				t.Fatalf("workbench failed: %v", wb["reason"])
			}
			if time.Since(start) > 3*time.Minute {
				t.Fatalf("workbench not running: %d %v\n%s", code, wb, run("logs", "--tail", "40"))
			}
		}
	}
	waitRunning()
	cid, install := workbenchContainer(t, cli, id)
	installID = install
	openLab(t, hc, base, id)

	// down stops the portal only; the workbench keeps running, and the next
	// portal adopts it (same container, still reachable through the proxy).
	run("down")
	if info, err := cli.ContainerInspect(ctx, cid); err != nil || !info.State.Running {
		t.Fatalf("the workbench did not survive `down`: %v", err)
	}
	run("up", "-d")
	waitHealthy(t, base)
	waitRunning()
	if again, _ := workbenchContainer(t, cli, id); again != cid {
		t.Fatalf("the workbench was recreated (%s → %s), not adopted", cid, again)
	}
	login(t, hc, base, "admin", password) // the session survives too, but a fresh one proves the login after up
	openLab(t, hc, base, id)
}

// composeCommand is `docker compose` (v2) where the plugin is installed,
// else Debian's `docker-compose`.
func composeCommand(t *testing.T) []string {
	if exec.Command("docker", "compose", "version").Run() == nil {
		return []string{"docker", "compose"}
	}
	if _, err := exec.LookPath("docker-compose"); err == nil {
		return []string{"docker-compose"}
	}
	t.Fatal("neither `docker compose` nor `docker-compose` is installed (apt-get install docker-compose)")
	return nil
}

func moduleRoot(t *testing.T) string {
	out, err := exec.Command("go", "env", "GOMOD").Output()
	if err != nil {
		t.Fatal(err)
	}
	return filepath.Dir(strings.TrimSpace(string(out)))
}

// baseImages makes (once per script and Go version; kept in the engine as
// a cache under workbench-install-test/{runtime,build}:<hash>) the runtime and build
// bases with scripts/install-test-bases.sh.
func baseImages(t *testing.T, root string) (runtimeTag, buildTag string) {
	script := filepath.Join(root, "scripts", "install-test-bases.sh")
	b, err := os.ReadFile(script)
	if err != nil {
		t.Fatal(err)
	}
	gov, _ := exec.Command("go", "env", "GOVERSION").Output()
	tag := hashTag(append(b, gov...))
	runtimeTag, buildTag = "workbench-install-test/runtime:"+tag, "workbench-install-test/build:"+tag
	if exec.Command("docker", "image", "inspect", runtimeTag, buildTag).Run() == nil {
		return runtimeTag, buildTag
	}
	t.Logf("making base images with debootstrap (minutes, once): %s %s", runtimeTag, buildTag)
	out, err := exec.Command(script, runtimeTag, buildTag).CombinedOutput()
	if err != nil {
		t.Fatalf("install-test-bases.sh: %v\n%s", err, tail(out, 4000))
	}
	return runtimeTag, buildTag
}

// serveModules serves this machine's Go module cache as a GOPROXY on the
// default bridge's gateway, where `docker build` containers reach it: the
// image build downloads nothing from the internet. The image runs
// `go mod download`, which wants every module of go.mod, also those no
// build or test here ever loaded (a fresh machine's cache lacks them), so
// the cache is filled the same way first, from this machine's GOPROXY.
func serveModules(t *testing.T, cli client.APIClient, root string) string {
	dl := exec.Command("go", "mod", "download")
	dl.Dir = root
	if out, err := dl.CombinedOutput(); err != nil {
		t.Fatalf("go mod download (filling the module cache the image build reads): %v\n%s", err, tail(out, 4000))
	}
	out, err := exec.Command("go", "env", "GOMODCACHE").Output()
	if err != nil {
		t.Fatal(err)
	}
	dir := filepath.Join(strings.TrimSpace(string(out)), "cache", "download")
	gw := bridgeGateway(t, cli)
	// A fixed port keeps GOPROXY (a build argument) the same from run to
	// run, so the engine's cached build layers stay valid; a random one
	// when it is taken (the build then starts cold).
	ln, err := net.Listen("tcp", net.JoinHostPort(gw, "18765"))
	if err != nil {
		ln, err = net.Listen("tcp", net.JoinHostPort(gw, "0"))
	}
	if err != nil {
		t.Fatalf("listen on the bridge gateway %s: %v", gw, err)
	}
	srv := &http.Server{Handler: http.FileServer(http.Dir(dir)), ReadHeaderTimeout: 10 * time.Second}
	go func() { _ = srv.Serve(ln) }()
	t.Cleanup(func() { srv.Close() })
	return "http://" + ln.Addr().String()
}

func copyTracked(t *testing.T, root, dst string) {
	out, err := exec.Command("git", "-C", root, "ls-files", "-co", "--exclude-standard", "-z").Output()
	if err != nil {
		t.Fatal(err)
	}
	for _, f := range strings.Split(strings.TrimRight(string(out), "\x00"), "\x00") {
		if f == "" {
			continue
		}
		b, err := os.ReadFile(filepath.Join(root, f))
		if err != nil {
			continue // deleted in the work tree
		}
		info, _ := os.Stat(filepath.Join(root, f))
		if err := os.MkdirAll(filepath.Dir(filepath.Join(dst, f)), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(filepath.Join(dst, f), b, info.Mode().Perm()); err != nil {
			t.Fatal(err)
		}
	}
}

// waitContainerHealthy waits until the engine reports the project's portal
// container healthy by the image's HEALTHCHECK (its first check runs an
// interval, 30 s, after the start).
func waitContainerHealthy(t *testing.T, cli *client.Client, project string) {
	t.Helper()
	f := filters.NewArgs(filters.Arg("label", "com.docker.compose.project="+project), filters.Arg("label", "com.docker.compose.service=workbench"))
	for start := time.Now(); ; time.Sleep(time.Second) {
		list, err := cli.ContainerList(context.Background(), container.ListOptions{Filters: f})
		if err != nil {
			t.Fatal(err)
		}
		status := "no container"
		if len(list) == 1 {
			info, err := cli.ContainerInspect(context.Background(), list[0].ID)
			if err != nil {
				t.Fatal(err)
			}
			status = "no health check"
			if info.State != nil && info.State.Health != nil {
				status = info.State.Health.Status
			}
			if status == "healthy" {
				return
			}
			if status == "unhealthy" {
				t.Fatalf("the portal container is unhealthy: %+v", info.State.Health.Log)
			}
		}
		if time.Since(start) > 5*time.Minute {
			t.Fatalf("the portal container is not healthy after 5 minutes: %s", status)
		}
	}
}

func waitHealthy(t *testing.T, base string) {
	t.Helper()
	for start := time.Now(); ; time.Sleep(300 * time.Millisecond) {
		res, err := http.Get(base + "/healthz")
		if err == nil {
			res.Body.Close()
			if res.StatusCode == 200 {
				return
			}
		}
		if time.Since(start) > 3*time.Minute {
			t.Fatalf("the portal did not answer /healthz at %s: %v", base, err)
		}
	}
}

func login(t *testing.T, hc *http.Client, base, user, password string) {
	t.Helper()
	form := url.Values{"username": {user}, "password": {password}}
	req, _ := http.NewRequest(http.MethodPost, base+"/login", strings.NewReader(form.Encode()))
	req.Header.Set("Content-Type", "application/x-www-form-urlencoded")
	req.Header.Set("Origin", base)
	req.Header.Set("Sec-Fetch-Site", "same-origin")
	res, err := hc.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	res.Body.Close()
	if res.StatusCode != http.StatusSeeOther {
		t.Fatalf("login: %d", res.StatusCode)
	}
}

// openLab opens the workbench through the containerised portal's proxy
// with the session, as the Open button does.
func openLab(t *testing.T, hc *http.Client, base, id string) {
	t.Helper()
	res, err := hc.Get(base + "/wb/" + id + "/lab")
	if err != nil {
		t.Fatal(err)
	}
	body, _ := io.ReadAll(res.Body)
	res.Body.Close()
	if res.StatusCode != 200 || !bytes.Contains(body, []byte("Fake JupyterLab")) {
		t.Fatalf("through the proxy: %d %q", res.StatusCode, tail(body, 300))
	}
}

func workbenchContainer(t *testing.T, cli client.APIClient, id string) (cid, install string) {
	t.Helper()
	cs, err := cli.ContainerList(context.Background(), container.ListOptions{All: true,
		Filters: filters.NewArgs(filters.Arg("label", runtime.LabelID+"="+id))})
	if err != nil || len(cs) != 1 {
		t.Fatalf("containers of workbench %s: %d %v", id, len(cs), err)
	}
	return cs[0].ID, cs[0].Labels[runtime.LabelInstall]
}

// removeInstallObjects removes what the containerised portal made: every
// container, volume and network of its install, and its egress rules.
func removeInstallObjects(cli client.APIClient, installID string) {
	ctx := context.Background()
	f := filters.NewArgs(filters.Arg("label", runtime.LabelInstall+"="+installID))
	cs, _ := cli.ContainerList(ctx, container.ListOptions{All: true, Filters: f})
	for _, c := range cs {
		_ = cli.ContainerRemove(ctx, c.ID, container.RemoveOptions{Force: true})
	}
	vs, _ := cli.VolumeList(ctx, volume.ListOptions{Filters: f})
	for _, v := range vs.Volumes {
		_ = cli.VolumeRemove(ctx, v.Name, true)
	}
	ns, _ := cli.NetworkList(ctx, network.ListOptions{Filters: f})
	for _, n := range ns {
		_ = cli.NetworkRemove(ctx, n.ID)
	}
	_ = runtime.NewFirewall(slog.New(slog.DiscardHandler)).Remove(ctx, installID)
}

func freeAddr(t *testing.T) string {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer ln.Close()
	return ln.Addr().String()
}

func randHex(n int) string {
	b := make([]byte, n)
	_, _ = rand.Read(b)
	return hex.EncodeToString(b)
}

func hashTag(b []byte) string {
	h := fnv64(b)
	return fmt.Sprintf("%016x", h)
}

func fnv64(b []byte) uint64 {
	h := uint64(14695981039346656037)
	for _, c := range b {
		h ^= uint64(c)
		h *= 1099511628211
	}
	return h
}

func tail(b []byte, n int) string {
	if len(b) > n {
		b = b[len(b)-n:]
	}
	return string(b)
}

// bridgeGateway is the host's address on the default bridge (docker0),
// which build containers reach: the IPAM gateway where the engine reports
// one, else the bridge interface's own IPv4 address.
func bridgeGateway(t *testing.T, cli client.APIClient) string {
	br, err := cli.NetworkInspect(context.Background(), "bridge", network.InspectOptions{})
	if err != nil {
		t.Fatalf("default bridge: %v", err)
	}
	for _, c := range br.IPAM.Config {
		if c.Gateway != "" {
			return c.Gateway
		}
	}
	name := br.Options["com.docker.network.bridge.name"]
	if name == "" {
		name = "docker0"
	}
	ifc, err := net.InterfaceByName(name)
	if err != nil {
		t.Fatalf("bridge interface %s: %v", name, err)
	}
	addrs, _ := ifc.Addrs()
	for _, a := range addrs {
		if ipn, ok := a.(*net.IPNet); ok && ipn.IP.To4() != nil {
			return ipn.IP.String()
		}
	}
	t.Fatalf("bridge interface %s has no IPv4 address", name)
	return ""
}

// noInheritedTestLabel fails when the portal image carries a workbench.test
// label: one inherited from its bases would make a site's own portal (and
// the containers it runs) look like a test's object to leak checks.
func noInheritedTestLabel(t *testing.T, cli client.APIClient, ref string) {
	t.Helper()
	inspect, err := cli.ImageInspect(context.Background(), ref)
	if err != nil {
		t.Fatalf("inspect %s: %v", ref, err)
	}
	if inspect.Config == nil {
		return
	}
	for k, v := range inspect.Config.Labels {
		if strings.HasPrefix(k, "workbench.test") {
			t.Errorf("portal image %s carries the label %s=%s (inherited from a base image)", ref, k, v)
		}
	}
}
