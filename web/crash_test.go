package web_test

import (
	"bytes"
	"context"
	"fmt"
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/docker/docker/api/types/container"
	"github.com/docker/docker/api/types/filters"
	"github.com/docker/docker/client"

	"workbench/internal/testsupport/freeport"
	"workbench/models"
	"workbench/orchestrator/runtime"
)

// The crash test runs the real binary, so what it proves is what an
// operator gets: SIGKILL leaves no in-process cleanup to lean on.

// portalProc is one `workbench serve` subprocess (and its successors on the
// same data dir and address).
type portalProc struct {
	t       *testing.T
	bin     string
	dataDir string
	addr    string
	logPath string
	env     []string
	args    []string // more `serve` flags

	cmd  *exec.Cmd
	done chan struct{} // closed when cmd has exited
	err  error         // cmd.Wait's result, valid after done

	// http reuses testPortal's request helpers, which only read ts.URL.
	http *testPortal
}

const crashOrphanGrace = 3 * time.Second

func newPortalProc(t *testing.T) *portalProc {
	t.Helper()
	// Restarted on the same address: a port outgoing connections never
	// take, so none can hold it while the portal is down.
	addr, err := freeport.Addr()
	if err != nil {
		t.Fatal(err)
	}
	pp := &portalProc{t: t, bin: workbenchBinary(t), dataDir: t.TempDir(), addr: addr}
	pp.logPath = filepath.Join(t.TempDir(), "portal.log")
	pp.http = &testPortal{t: t, ts: &httptest.Server{URL: "http://" + addr}}
	// The test's own WORKBENCH_* settings must not leak into the portal.
	for _, kv := range os.Environ() {
		if !strings.HasPrefix(kv, "WORKBENCH_") {
			pp.env = append(pp.env, kv)
		}
	}
	pp.env = append(pp.env,
		"WORKBENCH_ADDR="+addr,
		"WORKBENCH_DATA_DIR="+pp.dataDir,
		"WORKBENCH_GPUS=mock:dgxh100",
		"WORKBENCH_ADMIN_PASSWORD="+adminPassword,
		"WORKBENCH_RECONCILE_INTERVAL=1s",
		"WORKBENCH_ORPHAN_GRACE="+crashOrphanGrace.String(),
		"WORKBENCH_LOG_LEVEL=debug",
	)
	t.Cleanup(func() {
		if !t.Failed() {
			return
		}
		b, _ := os.ReadFile(pp.logPath)
		lines := strings.Split(strings.TrimRight(string(b), "\n"), "\n")
		if len(lines) > 400 {
			lines = append([]string{fmt.Sprintf("… (%d earlier lines in %s)", len(lines)-400, pp.logPath)}, lines[len(lines)-400:]...)
		}
		t.Logf("portal log:\n%s", strings.Join(lines, "\n"))
	})
	return pp
}

func (pp *portalProc) logf(format string, args ...any) {
	f, err := os.OpenFile(pp.logPath, os.O_CREATE|os.O_APPEND|os.O_WRONLY, 0o644)
	if err == nil {
		fmt.Fprintf(f, "===== test: "+format+" =====\n", args...)
		f.Close()
	}
}

// start runs `workbench serve` and waits until /healthz answers.
func (pp *portalProc) start() {
	t := pp.t
	t.Helper()
	pp.logf("starting portal")
	logf, err := os.OpenFile(pp.logPath, os.O_CREATE|os.O_APPEND|os.O_WRONLY, 0o644)
	if err != nil {
		t.Fatal(err)
	}
	cmd := exec.Command(pp.bin, append([]string{"serve"}, pp.args...)...)
	cmd.Env = pp.env
	cmd.Stdout, cmd.Stderr = logf, logf
	if err := cmd.Start(); err != nil {
		logf.Close()
		t.Fatal(err)
	}
	logf.Close() // the child holds its own descriptor
	done := make(chan struct{})
	pp.cmd, pp.done = cmd, done
	go func() { pp.err = cmd.Wait(); close(done) }()
	// Whatever happens to the test, no portal outlives it.
	t.Cleanup(func() {
		select {
		case <-done:
		default:
			cmd.Process.Kill()
			<-done
		}
	})

	deadline := time.Now().Add(30 * time.Second)
	for {
		res, err := http.Get("http://" + pp.addr + "/healthz")
		if err == nil {
			res.Body.Close()
			if res.StatusCode == http.StatusOK {
				return
			}
		}
		select {
		case <-done:
			t.Fatalf("portal exited during startup: %v", pp.err)
		default:
		}
		if time.Now().After(deadline) {
			t.Fatalf("portal did not answer /healthz within 30s (last: %v)", err)
		}
		time.Sleep(50 * time.Millisecond)
	}
}

// signal sends sig and waits (bounded) for the process to exit.
func (pp *portalProc) signal(sig syscall.Signal, within time.Duration) error {
	pp.t.Helper()
	pp.logf("sending %v", sig)
	if err := pp.cmd.Process.Signal(sig); err != nil {
		pp.t.Fatalf("signal %v: %v", sig, err)
	}
	select {
	case <-pp.done:
		return pp.err
	case <-time.After(within):
		pp.t.Fatalf("portal still running %s after %v", within, sig)
		return nil
	}
}

// cli runs a CLI subcommand on the same data dir and returns its stdout.
func (pp *portalProc) cli(stdin string, args ...string) string {
	pp.t.Helper()
	cmd := exec.Command(pp.bin, args...)
	cmd.Env = pp.env
	cmd.Stdin = strings.NewReader(stdin)
	var stdout, stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	if err := cmd.Run(); err != nil {
		pp.t.Fatalf("workbench %s: %v\n%s", strings.Join(args, " "), err, stderr.String())
	}
	return strings.TrimSpace(stdout.String())
}

// engineState is what the engine says about one workbench's container.
type engineState struct {
	id, startedAt string
	running       bool
	labels        map[string]string
}

// containerOf finds the container of a workbench in the engine by label;
// ok is false when there is none.
func containerOf(t *testing.T, cli *client.Client, installID, wbID string) (engineState, bool) {
	t.Helper()
	ctx := context.Background()
	cs, err := cli.ContainerList(ctx, container.ListOptions{All: true, Filters: filters.NewArgs(
		filters.Arg("label", runtime.LabelInstall+"="+installID), filters.Arg("label", runtime.LabelID+"="+wbID))})
	if err != nil {
		t.Fatal(err)
	}
	if len(cs) == 0 {
		return engineState{}, false
	}
	if len(cs) > 1 {
		t.Fatalf("workbench %s has %d containers", wbID, len(cs))
	}
	info, err := cli.ContainerInspect(ctx, cs[0].ID)
	if err != nil {
		t.Fatal(err)
	}
	return engineState{id: info.ID, startedAt: info.State.StartedAt, running: info.State.Running, labels: info.Config.Labels}, true
}

func TestPortalCrashAndRestart(t *testing.T) {
	cli := dockerClient(t)
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Minute)
	defer cancel()
	fakeRef, realRef := fakeJupyterImage(t), realJupyterImage(t)

	pp := newPortalProc(t)
	// Read the install id before the first start: registering the cleanup
	// now means it runs after the portal has been killed (cleanups are LIFO),
	// so no launch can add a container behind its back.
	store, err := models.Open(ctx, pp.dataDir, slog.New(slog.NewTextHandler(io.Discard, nil)))
	if err != nil {
		t.Fatal(err)
	}
	installID, err := store.InstallID(ctx)
	store.Close()
	if err != nil {
		t.Fatal(err)
	}
	cleanupInstall(t, cli, installID)

	started := time.Now()
	pp.start()
	t.Logf("portal up in %s", time.Since(started).Round(time.Millisecond))
	p := pp.http

	// Accounts through the CLI, on the live data dir.
	pp.cli("alice-password-1\n", "user", "add", "alice", "--password-stdin")
	alice := pp.cli("", "token", "create", "alice")
	admin := pp.cli("", "token", "create", "admin")
	if !strings.HasPrefix(alice, "wbt_") || !strings.HasPrefix(admin, "wbt_") {
		t.Fatalf("token create printed %q / %q, want a token alone", alice, admin)
	}
	for _, img := range []string{catalogJSON(fakeCatalogImage("fake", fakeRef)), catalogJSON(realCatalogImage("jupyter", realRef))} {
		if code, body := p.api("POST", "/api/v1/images", admin, img); code != http.StatusCreated {
			t.Fatalf("add catalog image: %d %v", code, body)
		}
	}

	launch := func(name, image string) string {
		t.Helper()
		code, wb := p.api("POST", "/api/v1/workbenches", alice,
			fmt.Sprintf(`{"name":%q,"image":%q,"flavor":"1x H100 80GB HBM3"}`, name, image))
		if code != http.StatusAccepted {
			t.Fatalf("launch %s: %d %v", name, code, wb)
		}
		return wb["id"].(string)
	}

	// Two workbenches that run through the crash.
	survivors := []string{launch("survivor-1", "fake"), launch("survivor-2", "fake")}
	before := map[string]engineState{}
	gpusBefore := map[string]any{}
	for _, id := range survivors {
		wb := waitState(t, p, alice, id, "running")
		gpusBefore[id] = fmt.Sprint(wb["gpus"])
		c, ok := containerOf(t, cli, installID, id)
		if !ok || !c.running {
			t.Fatalf("running workbench %s has no running container (found %v)", id, ok)
		}
		if c.labels[runtime.LabelInstall] != installID {
			t.Fatalf("container of %s has install label %q, the database says %q", id, c.labels[runtime.LabelInstall], installID)
		}
		before[id] = c
	}

	// Two launches killed mid-way, one on each side of the container start:
	//   - "half": the real Jupyter takes seconds to answer, so waiting for
	//     "starting" catches it with its container started (or about to be)
	//     and Jupyter not answering yet; the restarted portal must resume
	//     the launch (or clean it up if the start had not happened).
	//   - "early": a fake launched just before the kill, so the kill lands
	//     while its pipeline is at requested/pulling/creating, with no
	//     container or one not started; the restart must fail it cleanly.
	// Should polling miss "starting" (the launch reached "running" between
	// two polls), the kill still happens and everything else is still
	// checked; the log says so.
	half := launch("half", "jupyter")
	killedIn := ""
	deadline := time.Now().Add(60 * time.Second)
	for killedIn == "" {
		_, wb := p.api("GET", "/api/v1/workbenches/"+half, alice, "")
		switch st, _ := wb["state"].(string); st {
		case "requested", "pulling", "creating":
			if time.Now().After(deadline) {
				t.Fatalf("real Jupyter launch still %s after 60s", st)
			}
			time.Sleep(10 * time.Millisecond)
		case "starting", "running":
			killedIn = st
		default:
			t.Fatalf("real Jupyter launch went to %q before the kill: %v", st, wb["reason"])
		}
	}
	early := launch("early", "fake")
	if err := pp.signal(syscall.SIGKILL, 10*time.Second); err == nil || !strings.Contains(err.Error(), "killed") {
		t.Fatalf("portal exit after SIGKILL: %v", err)
	}
	if killedIn == "running" {
		t.Logf("the real Jupyter launch reached running before the kill: its mid-launch state was missed this run")
	} else {
		t.Logf("portal SIGKILLed with the real Jupyter launch in state %q", killedIn)
	}

	// An orphan: labelled as this install's, naming a workbench the database
	// never had, made while no portal runs.
	orphan, err := cli.ContainerCreate(ctx, &container.Config{
		Image: fakeRef, User: "1000",
		Cmd: []string{"/fakejupyter", "--ip=0.0.0.0", "--port=8888", "--base-url=/wb/orphan/", "--token=orphan"},
		Labels: map[string]string{
			runtime.LabelInstall: before[survivors[0]].labels[runtime.LabelInstall],
			runtime.LabelID:      "nosuchworkbench",
			runtime.LabelOwner:   "alice",
			runtime.LabelKind:    runtime.KindWorkbench,
		},
	}, nil, nil, nil, "wb-"+installID+"-orphan-"+strconv.FormatInt(time.Now().UnixNano(), 36))
	if err != nil {
		t.Fatal(err)
	}
	if err := cli.ContainerStart(ctx, orphan.ID, container.StartOptions{}); err != nil {
		t.Fatal(err)
	}
	orphanInfo, err := cli.ContainerInspect(ctx, orphan.ID)
	if err != nil {
		t.Fatal(err)
	}
	orphanCreated, _ := time.Parse(time.RFC3339Nano, orphanInfo.Created)

	restarted := time.Now()
	pp.start()
	t.Logf("portal restarted in %s", time.Since(restarted).Round(time.Millisecond))

	// The survivors: untouched in the engine, running in the API, reachable.
	ac := p.client()
	p.login(ac, "alice", "alice-password-1")
	checkSurvivors := func(when string) {
		t.Helper()
		for _, id := range survivors {
			c, ok := containerOf(t, cli, installID, id)
			if !ok || !c.running || c.id != before[id].id || c.startedAt != before[id].startedAt {
				t.Fatalf("%s: container of %s is %+v (found %v), want the same running container %s started at %s",
					when, id, c, ok, before[id].id[:12], before[id].startedAt)
			}
		}
	}
	checkSurvivors("after restart")
	for _, id := range survivors {
		code, wb := p.api("GET", "/api/v1/workbenches/"+id, alice, "")
		if code != 200 || wb["state"] != "running" || fmt.Sprint(wb["gpus"]) != gpusBefore[id] {
			t.Fatalf("after restart the API says %s is %d %v (GPUs %v, had %v)", id, code, wb["state"], wb["gpus"], gpusBefore[id])
		}
		res, body := p.get(ac, "/wb/"+id+"/lab")
		if res.StatusCode != 200 || !strings.Contains(body, "Fake JupyterLab") {
			t.Fatalf("after restart /wb/%s/lab: %d %q", id, res.StatusCode, body)
		}
	}

	// The half-launched ones settle: running and reachable, or failed with
	// their container gone and GPUs freed — never left in a launching state.
	settled := map[string]map[string]any{}
	halfC := map[string]engineState{}
	for _, id := range []string{half, early} {
		var wb map[string]any
		deadline = time.Now().Add(90 * time.Second)
		for {
			_, wb = p.api("GET", "/api/v1/workbenches/"+id, alice, "")
			if st := wb["state"]; st == "running" || st == "failed" {
				break
			}
			if time.Now().After(deadline) {
				t.Fatalf("half-launched workbench %s stuck in %v 90s after the restart", wb["name"], wb["state"])
			}
			time.Sleep(100 * time.Millisecond)
		}
		settled[id] = wb
		t.Logf("half-launched %s ended %v %q %s after the restart",
			wb["name"], wb["state"], wb["reason"], time.Since(restarted).Round(time.Millisecond))
		c, found := containerOf(t, cli, installID, id)
		if wb["state"] == "running" {
			if !found || !c.running {
				t.Fatalf("half-launched %s running in the API without a running container (found %v)", wb["name"], found)
			}
			halfC[id] = c
			res, body := p.get(ac, "/wb/"+id+"/api/status")
			if res.StatusCode != 200 {
				t.Fatalf("half-launched %s through the proxy: %d %q", wb["name"], res.StatusCode, body)
			}
		} else {
			if found {
				t.Fatalf("failed half-launched %s still has container %s", wb["name"], c.id[:12])
			}
			if g, _ := wb["gpus"].([]any); len(g) != 0 {
				t.Fatalf("failed half-launched %s still holds GPUs %v", wb["name"], g)
			}
		}
	}

	// The orphan goes once its grace has passed, not before.
	deadline = orphanCreated.Add(crashOrphanGrace + 10*time.Second)
	for {
		_, err := cli.ContainerInspect(ctx, orphan.ID)
		if client.IsErrNotFound(err) {
			break
		} else if err != nil {
			t.Fatal(err)
		}
		if time.Now().After(deadline) {
			t.Fatalf("orphan container still there %s after its creation (grace %s, reconcile every 1s)",
				time.Since(orphanCreated).Round(time.Millisecond), crashOrphanGrace)
		}
		time.Sleep(100 * time.Millisecond)
	}
	// The engine's Created and the local clock are the same host's clock;
	// the 200 ms allows for rounding and polling.
	if age := time.Since(orphanCreated); age < crashOrphanGrace-200*time.Millisecond {
		t.Fatalf("orphan removed %s after its creation, before the %s grace", age, crashOrphanGrace)
	} else {
		t.Logf("orphan removed %s after its creation", age.Round(time.Millisecond))
	}

	// Every container of the install belongs to a running workbench the
	// database knows, and every GPU in use belongs to one of them.
	code, list := p.api("GET", "/api/v1/workbenches?all=true", admin, "")
	if code != 200 {
		t.Fatalf("list workbenches: %d %v", code, list)
	}
	state := map[string]any{}
	for _, it := range list["items"].([]any) {
		wb := it.(map[string]any)
		state[wb["id"].(string)] = wb["state"]
	}
	cs, err := cli.ContainerList(ctx, container.ListOptions{All: true,
		Filters: filters.NewArgs(filters.Arg("label", runtime.LabelInstall+"="+installID))})
	if err != nil {
		t.Fatal(err)
	}
	running := 0
	for _, c := range cs {
		id := c.Labels[runtime.LabelID]
		if state[id] != "running" {
			t.Errorf("container %s (workbench %q) is unknown to the database or not running there (state %v)", c.Names, id, state[id])
		}
		running++
	}
	code, gpus := p.api("GET", "/api/v1/gpus", alice, "")
	if code != 200 {
		t.Fatalf("GET /api/v1/gpus: %d", code)
	}
	inUse := 0
	for _, it := range gpus["items"].([]any) {
		g := it.(map[string]any)
		if g["state"] == "in_use" {
			inUse++
			if state[g["workbench_id"].(string)] != "running" {
				t.Errorf("GPU %v held by %v, which is %v", g["uuid"], g["workbench_id"], state[g["workbench_id"].(string)])
			}
		}
	}
	if inUse != running {
		t.Errorf("%d GPUs in use for %d running workbenches", inUse, running)
	}

	// Stopping the portal never stops a workbench.
	if err := pp.signal(syscall.SIGTERM, 30*time.Second); err != nil {
		t.Fatalf("portal exit after SIGTERM: %v", err)
	}
	checkSurvivors("after SIGTERM")
	for id, before := range halfC {
		if c, ok := containerOf(t, cli, installID, id); !ok || !c.running || c.id != before.id {
			t.Fatalf("after SIGTERM the resumed workbench %s has container %+v (found %v)", id, c, ok)
		}
	}
	t.Logf("crash test done in %s", time.Since(started).Round(time.Millisecond))
}
