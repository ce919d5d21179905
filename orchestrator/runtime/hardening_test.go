package runtime

import (
	"context"
	"errors"
	"io"
	"net/http"
	"slices"
	"strings"
	"testing"
	"time"
)

// TestHardenedLifecycle runs one hardened container through its whole life:
// create, start, checks from inside, logs, stop, remove.
func TestHardenedLifecycle(t *testing.T) {
	t.Parallel()
	e := newEngineEnv(t)
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()

	net := e.network(t, ctx, "alice")
	spec := e.spec("hard", net, "")
	info, base := e.start(t, ctx, spec)

	// From the inside: no capabilities, no_new_privs, seccomp filter on,
	// no engine socket, the unprivileged user.
	sc := selfcheck(t, ctx, base, "")
	if sc.CapEff != "0000000000000000" {
		t.Errorf("CapEff = %q, want all dropped", sc.CapEff)
	}
	if sc.NoNewPrivs != "1" {
		t.Errorf("NoNewPrivs = %q, want 1", sc.NoNewPrivs)
	}
	if sc.Seccomp != "2" {
		t.Errorf("Seccomp = %q, want 2 (filter: default profile)", sc.Seccomp)
	}
	if sc.DockerSocket {
		t.Error("docker socket visible inside the container")
	}
	if sc.UID != 1000 {
		t.Errorf("uid = %d, want 1000", sc.UID)
	}

	// The token is required even from the host.
	req, _ := http.NewRequestWithContext(ctx, "GET", base+"api/status", nil)
	if resp, err := httpClient.Do(req); err != nil || resp.StatusCode != http.StatusForbidden {
		t.Errorf("no token: %v %v, want 403", resp, err)
	} else {
		resp.Body.Close()
	}

	// From the engine's side: nothing published, limits set.
	raw, err := e.d.cli.ContainerInspect(ctx, info.ID)
	if err != nil {
		t.Fatal(err)
	}
	if len(raw.NetworkSettings.Ports) != 0 && hasHostPort(raw.NetworkSettings.Ports) {
		t.Errorf("published ports: %v", raw.NetworkSettings.Ports)
	}
	hc := raw.HostConfig
	if hc.Privileged || hc.Memory != spec.MemoryBytes || hc.MemorySwap != spec.MemoryBytes || hc.NanoCPUs != spec.NanoCPUs ||
		hc.PidsLimit == nil || *hc.PidsLimit != spec.PidsLimit || hc.ShmSize != spec.ShmBytes {
		t.Errorf("host config: privileged %v mem %d swap %d cpu %d pids %v shm %d",
			hc.Privileged, hc.Memory, hc.MemorySwap, hc.NanoCPUs, hc.PidsLimit, hc.ShmSize)
	}
	if len(info.IPs) != 1 || info.IPs[net] == "" {
		t.Errorf("networks %v, want only %s", info.IPs, net)
	}

	// Labels and the simulated GPU assignment.
	if info.Labels[LabelID] != "hard" || info.Labels[LabelInstall] != e.install || info.Labels[LabelOwner] != spec.Owner {
		t.Errorf("labels %v", info.Labels)
	}
	if !slices.Contains(info.Env, "WORKBENCH_SIMULATED_GPUS=GPU-sim-0,GPU-sim-1") {
		t.Errorf("env %v lacks the simulated GPUs", info.Env)
	}
	if g := info.GPUs(); !g.Simulated || !slices.Equal(g.UUIDs, spec.GPUs.UUIDs) {
		t.Errorf("GPUs() = %+v", g)
	}
	if !info.Running || info.State != "running" || info.StartedAt.IsZero() || !info.FinishedAt.IsZero() {
		t.Errorf("running info %+v", info)
	}

	// Logs come back as plain text (no multiplexing headers). The engine
	// copies a container's output to its log driver asynchronously, so on a
	// busy machine the line printed before listening may reach the log
	// after the server already answers: read until it is there (bounded by
	// ctx), rather than once.
	logs := waitLogs(t, ctx, e.d, info.ID, "Fake JupyterLab listening")
	if strings.ContainsRune(logs, 0) {
		t.Errorf("logs carry multiplexing bytes: %q", logs)
	}

	// Stop: not running, finish time recorded.
	if err := e.d.Stop(ctx, info.ID, 5*time.Second); err != nil {
		t.Fatal(err)
	}
	stopped, err := e.d.Inspect(ctx, info.ID)
	if err != nil {
		t.Fatal(err)
	}
	if stopped.Running || stopped.State != "exited" || stopped.FinishedAt.IsZero() || stopped.FinishedAt.Before(stopped.StartedAt) {
		t.Errorf("stopped info %+v", stopped)
	}
	if err := e.d.Stop(ctx, info.ID, time.Second); err != nil {
		t.Errorf("second stop: %v", err)
	}

	// Remove: gone, and removing again is fine.
	if err := e.d.Remove(ctx, info.ID); err != nil {
		t.Fatal(err)
	}
	if _, err := e.d.Inspect(ctx, info.ID); !errors.Is(err, ErrNotFound) {
		t.Errorf("inspect after remove: %v, want ErrNotFound", err)
	}
	if err := e.d.Remove(ctx, info.ID); err != nil {
		t.Errorf("second remove: %v", err)
	}
	if err := e.d.Start(ctx, info.ID); !errors.Is(err, ErrNotFound) {
		t.Errorf("start after remove: %v, want ErrNotFound", err)
	}
}

func hasHostPort[M ~map[K][]B, K comparable, B any](m M) bool {
	for _, bs := range m {
		if len(bs) > 0 {
			return true
		}
	}
	return false
}

// TestCreateConflict: a second container with the same name is ErrConflict,
// so the lifecycle manager can find and adopt the first.
func TestCreateConflict(t *testing.T) {
	t.Parallel()
	e := newEngineEnv(t)
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	s := e.spec("dup", e.network(t, ctx, "dup"), "")
	if _, err := e.d.Create(ctx, s); err != nil {
		t.Fatal(err)
	}
	if _, err := e.d.Create(ctx, s); !errors.Is(err, ErrConflict) {
		t.Errorf("second create: %v, want ErrConflict", err)
	}
	s.Name += "-noimg"
	s.Image = "workbench-test/no-such-image:1"
	if _, err := e.d.Create(ctx, s); err == nil || errors.Is(err, ErrNotFound) {
		t.Errorf("create with missing image: %v, want a plain error", err)
	}
}

// waitLogs reads the container's logs until they contain want, failing the
// test when ctx ends first. Read errors fail the test too: an empty read
// must never pass for "no output yet" when the stream itself broke.
func waitLogs(t *testing.T, ctx context.Context, d *Docker, id, want string) string {
	t.Helper()
	for {
		rc, err := d.Logs(ctx, id, 50, false)
		if err != nil {
			t.Fatal(err)
		}
		b, err := io.ReadAll(rc)
		rc.Close()
		if err != nil {
			t.Fatalf("reading logs: %v", err)
		}
		if strings.Contains(string(b), want) {
			return string(b)
		}
		select {
		case <-ctx.Done():
			t.Fatalf("logs never contained %q; last read: %q", want, b)
		case <-time.After(50 * time.Millisecond):
		}
	}
}
