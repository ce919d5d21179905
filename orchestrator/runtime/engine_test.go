package runtime

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"os/exec"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/docker/docker/api/types/container"
	"github.com/docker/docker/api/types/filters"
	"github.com/docker/docker/api/types/network"
	"github.com/docker/docker/api/types/volume"

	"workbench/internal/testsupport/testimages"
)

// Integration tests run against the local engine. Every object they make
// carries labelRun=<this test's run id> and is removed by label at cleanup.
const labelRun = "workbench.test.run"

// netChurn keeps this package's network changes out of the isolation
// probes: the engine opens brief isolation gaps while it reprograms its
// firewall for a new network (see EnsureNetwork), and the probes check the
// steady state. Network changes take the write lock, probes the read lock.
var netChurn sync.RWMutex

const (
	testToken = "t0ken"
	testPort  = 8888
)

type engineEnv struct {
	d       *Docker
	install string // LabelInstall value, unique per test
	run     string // labelRun value
	image   string
}

// newEngineEnv connects to the local engine, skipping loudly when there is
// none, builds the fake Jupyter image and registers cleanup by label.
func newEngineEnv(t *testing.T) *engineEnv {
	t.Helper()
	if testing.Short() {
		t.Skip("real-engine test: skipped under -short (make test runs it)")
	}
	if out, err := exec.Command("docker", "info", "--format", "{{.ServerVersion}}").CombinedOutput(); err != nil {
		t.Skipf("SKIP: no Docker engine here (docker info: %v: %s)", err, strings.TrimSpace(string(out)))
	}
	d, err := NewDocker()
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
	defer cancel()
	if err := d.Ping(ctx); err != nil {
		t.Fatal(err)
	}
	img, err := testimages.FakeJupyter(ctx, d.cli)
	if err != nil {
		t.Fatal(err)
	}
	e := &engineEnv{d: d, run: randID(), image: img}
	e.install = "test-" + e.run
	t.Cleanup(func() { e.cleanup(t); d.Close() })
	return e
}

// labels are put on every network and volume a test makes.
func (e *engineEnv) labels() map[string]string {
	return map[string]string{testimages.TestLabel: "1", labelRun: e.run}
}

// cleanup removes containers, then networks and volumes (which containers
// may still hold), all found by this run's label.
func (e *engineEnv) cleanup(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	byRun := filters.NewArgs(filters.Arg("label", labelRun+"="+e.run))
	cs, err := e.d.cli.ContainerList(ctx, container.ListOptions{All: true, Filters: byRun})
	if err != nil {
		t.Errorf("cleanup: list containers: %v", err)
	}
	for _, c := range cs {
		if err := e.d.cli.ContainerRemove(ctx, c.ID, container.RemoveOptions{Force: true, RemoveVolumes: true}); err != nil {
			t.Errorf("cleanup: remove container %s: %v", c.ID[:12], err)
		}
	}
	netChurn.Lock()
	defer netChurn.Unlock()
	nets, _ := e.d.cli.NetworkList(ctx, network.ListOptions{Filters: byRun})
	for _, n := range nets {
		if err := e.d.cli.NetworkRemove(ctx, n.ID); err != nil {
			t.Errorf("cleanup: remove network %s: %v", n.Name, err)
		}
	}
	vols, _ := e.d.cli.VolumeList(ctx, volume.ListOptions{Filters: byRun})
	for _, v := range vols.Volumes {
		if err := e.d.cli.VolumeRemove(ctx, v.Name, true); err != nil {
			t.Errorf("cleanup: remove volume %s: %v", v.Name, err)
		}
	}
}

// network creates a per-user network for this test.
func (e *engineEnv) network(t *testing.T, ctx context.Context, user string) string {
	t.Helper()
	name := "wbtest-" + e.run + "-" + user
	netChurn.Lock()
	defer netChurn.Unlock()
	if err := e.d.EnsureNetwork(ctx, name, e.labels()); err != nil {
		t.Fatal(err)
	}
	return name
}

// spec is a hardened workbench spec running the fake Jupyter.
func (e *engineEnv) spec(name, net, vol string) Spec {
	base := "/wb/" + name + "/"
	cmd := strings.NewReplacer("{port}", strconv.Itoa(testPort), "{base_url}", base, "{token}", testToken).
		Replace(testimages.FakeJupyterStartCommand)
	s := Spec{
		WorkbenchID: name, Owner: "owner-" + net, InstallID: e.install,
		Name:  "wbtest-" + e.run + "-" + name,
		Image: e.image, Cmd: strings.Fields(cmd), User: "1000",
		Env:      []string{"WORKBENCH_TEST=1"},
		NanoCPUs: 500_000_000, MemoryBytes: 128 << 20, ShmBytes: 16 << 20, PidsLimit: 64,
		GPUs:    GPURequest{UUIDs: []string{"GPU-sim-0", "GPU-sim-1"}, Simulated: true},
		Network: net, Port: testPort,
		ExtraLabels: map[string]string{testimages.TestLabel: "1", labelRun: e.run},
	}
	if vol != "" {
		s.HomeVolume, s.HomePath = vol, testimages.FakeJupyterHome
	}
	return s
}

// start creates and starts a container and waits until Jupyter answers.
// It returns the container's info and its base URL as seen from the host.
func (e *engineEnv) start(t *testing.T, ctx context.Context, s Spec) (ContainerInfo, string) {
	t.Helper()
	id, err := e.d.Create(ctx, s)
	if err != nil {
		t.Fatal(err)
	}
	if err := e.d.Start(ctx, id); err != nil {
		t.Fatal(err)
	}
	info, err := e.d.Inspect(ctx, id)
	if err != nil {
		t.Fatal(err)
	}
	host, port := e.d.Endpoint(info, s.Network)
	if host == "" {
		t.Fatalf("no endpoint on %s: %+v", s.Network, info.IPs)
	}
	base := fmt.Sprintf("http://%s:%d/wb/%s/", host, port, s.WorkbenchID)
	deadline := time.Now().Add(15 * time.Second)
	for {
		code, _, err := httpDo(ctx, "GET", base+"api/status", "")
		if err == nil && code == http.StatusOK {
			return info, base
		}
		if time.Now().After(deadline) {
			t.Fatalf("jupyter at %s never answered: %d %v", base, code, err)
		}
		time.Sleep(50 * time.Millisecond)
	}
}

var httpClient = &http.Client{Timeout: 5 * time.Second}

// httpDo calls the fake Jupyter with the token in the Authorization header.
func httpDo(ctx context.Context, method, url, body string) (int, string, error) {
	req, err := http.NewRequestWithContext(ctx, method, url, strings.NewReader(body))
	if err != nil {
		return 0, "", err
	}
	req.Header.Set("Authorization", "token "+testToken)
	resp, err := httpClient.Do(req)
	if err != nil {
		return 0, "", err
	}
	defer resp.Body.Close()
	b, err := io.ReadAll(resp.Body)
	return resp.StatusCode, string(b), err
}

// selfcheckResult mirrors fakejupyter's /api/selfcheck answer.
type selfcheckResult struct {
	CapEff       string `json:"cap_eff"`
	CapBnd       string `json:"cap_bnd"`
	NoNewPrivs   string `json:"no_new_privs"`
	Seccomp      string `json:"seccomp"`
	DockerSocket bool   `json:"docker_socket"`
	UID          int    `json:"uid"`
	Probe        *struct {
		Target    string `json:"target"`
		Reachable bool   `json:"reachable"`
		Error     string `json:"error"`
	} `json:"probe"`
}

func selfcheck(t *testing.T, ctx context.Context, base, probe string) selfcheckResult {
	t.Helper()
	u := base + "api/selfcheck"
	if probe != "" {
		u += "?probe=" + probe
	}
	code, body, err := httpDo(ctx, "GET", u, "")
	if err != nil || code != http.StatusOK {
		t.Fatalf("selfcheck: %d %v %s", code, err, body)
	}
	var r selfcheckResult
	if err := json.Unmarshal([]byte(body), &r); err != nil {
		t.Fatal(err)
	}
	return r
}

func randID() string {
	b := make([]byte, 4)
	_, _ = rand.Read(b)
	return hex.EncodeToString(b)
}
