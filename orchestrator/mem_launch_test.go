package orchestrator

import (
	"context"
	"errors"
	"net"
	"net/http"
	"net/http/httptest"
	"slices"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"workbench/models"
	"workbench/orchestrator/runtime"
)

// recordingFirewall applies nothing and remembers the bridges it was given.
type recordingFirewall struct {
	mu      sync.Mutex
	bridges []string
}

func (f *recordingFirewall) Apply(_ context.Context, _, bridge string, _ runtime.EgressPolicy) error {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.bridges = append(f.bridges, bridge)
	return nil
}
func (f *recordingFirewall) Remove(context.Context, string) error { return nil }
func (f *recordingFirewall) Check(context.Context) error          { return nil }

// launchOnMem launches a second workbench on the rig's engine, its Jupyter
// served by jupyter (an httptest server every container's endpoint points
// at).
func launchOnMem(t *testing.T, r *memRig, jupyter http.Handler) *models.Workbench {
	t.Helper()
	serveJupyterOn(t, r, jupyter)
	ctx := context.Background()
	owner, err := r.store.UserByID(ctx, r.wb.OwnerID)
	if err != nil {
		t.Fatal(err)
	}
	fl, err := r.store.FlavorByID(ctx, r.wb.FlavorID)
	if err != nil {
		t.Fatal(err)
	}
	wb, err := r.m.Launch(ctx, owner, LaunchRequest{Name: "second", Image: "mem", Flavor: fl.Name})
	if err != nil {
		t.Fatal(err)
	}
	return wb
}

// serveJupyterOn makes the rig's containers answer with jupyter once
// running, so a launch on it can finish.
func serveJupyterOn(t *testing.T, r *memRig, jupyter http.Handler) {
	t.Helper()
	srv := httptest.NewServer(jupyter)
	t.Cleanup(srv.Close)
	host, portText, _ := net.SplitHostPort(strings.TrimPrefix(srv.URL, "http://"))
	port, _ := strconv.Atoi(portText)
	r.rt.SetEndpoint(func(info runtime.ContainerInfo, _ string) (string, int) {
		if !info.Running {
			return "", 0
		}
		return host, port
	})
}

// answersJupyter is a Jupyter stand-in that answers every request.
var answersJupyter = http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) { _, _ = w.Write([]byte(`{}`)) })

func (r *memRig) waitState(t *testing.T, id string, states ...string) *models.Workbench {
	t.Helper()
	deadline := time.Now().Add(time.Minute) // generous: a busy machine
	for {
		wb, err := r.store.WorkbenchByID(context.Background(), id)
		if err != nil {
			t.Fatal(err)
		}
		if slices.Contains(states, wb.State) {
			return wb
		}
		if time.Now().After(deadline) {
			// What it is stuck in says where to look.
			t.Fatalf("workbench %s is %s (progress %d, reason %q, queue %q) after a minute; want %v", id, wb.State, wb.Progress, wb.Reason, wb.QueueReason, states)
		}
		time.Sleep(time.Millisecond)
	}
}

// A launch on the in-memory engine runs the whole pipeline: pull, volume,
// network, egress rules, container, start, Jupyter's answer, then running
// with its meter open.
func TestMemLaunchRunsThePipeline(t *testing.T) {
	t.Parallel()
	r := newMemRig(t)
	fw := &recordingFirewall{}
	r.m.UseFirewall(fw)
	wb := launchOnMem(t, r, http.HandlerFunc(func(w http.ResponseWriter, req *http.Request) {
		if !strings.HasSuffix(req.URL.Path, "/api/status") || req.Header.Get("Authorization") == "" {
			http.NotFound(w, req)
			return
		}
		_, _ = w.Write([]byte(`{"last_activity":"2026-01-01T00:00:00Z"}`))
	}))
	got := r.waitState(t, wb.ID, models.StateRunning, models.StateFailed)
	if got.State != models.StateRunning {
		t.Fatalf("launch ended %s: %s", got.State, got.Reason)
	}
	c, ok := r.rt.Container(r.m.containerName(wb.ID))
	if !ok || !c.Running || c.Labels[runtime.LabelID] != wb.ID {
		t.Errorf("container: exists %v, running %v, labels %v", ok, c.Running, c.Labels)
	}
	if len(got.GPUs) != 1 || got.Endpoint == "" {
		t.Errorf("running record: GPUs %v, endpoint %q", got.GPUs, got.Endpoint)
	}
	if _, err := r.store.OpenIntervalOf(context.Background(), wb.ID); err != nil {
		t.Errorf("no open usage interval: %v", err)
	}
	if r.rt.Calls("EnsureImage") != 1 || !r.rt.HasVolume(r.m.homeVolume("alice")) {
		t.Errorf("pulls %d, home volume made %v", r.rt.Calls("EnsureImage"), r.rt.HasVolume(r.m.homeVolume("alice")))
	}
	fw.mu.Lock()
	defer fw.mu.Unlock()
	if len(fw.bridges) == 0 {
		t.Error("egress rules were not applied before the start")
	}
}

// A pull that fails fails the launch with the engine's reason and frees
// the workbench's GPU.
func TestMemLaunchFailsWhenThePullFails(t *testing.T) {
	t.Parallel()
	r := newMemRig(t)
	r.m.UseFirewall(&recordingFirewall{})
	r.rt.PlanPull("mem:latest", []runtime.PullProgress{{Percent: 30, Status: "Downloading"}}, errors.New("pull access denied for mem"))
	wb := launchOnMem(t, r, http.NotFoundHandler())
	got := r.waitState(t, wb.ID, models.StateFailed, models.StateRunning)
	if got.State != models.StateFailed {
		t.Fatalf("launch ended %s, want failed", got.State)
	}
	if !strings.Contains(got.Reason+got.ReasonDetails, "pull access denied") {
		t.Errorf("reason %q (details %q), want the engine's refusal", got.Reason, got.ReasonDetails)
	}
	if len(got.GPUs) != 0 {
		t.Errorf("GPUs still bound after the failed launch: %v", got.GPUs)
	}
	if _, ok := r.rt.Container(r.m.containerName(wb.ID)); ok {
		t.Error("a container was created although the pull failed")
	}
}
