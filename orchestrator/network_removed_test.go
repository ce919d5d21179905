package orchestrator

import (
	"bytes"
	"log/slog"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/docker/docker/api/types/network"

	"workbench/models"
)

// lockedBuffer is a log sink tests read while the manager writes.
type lockedBuffer struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (l *lockedBuffer) Write(p []byte) (int, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.b.Write(p)
}

func (l *lockedBuffer) String() string {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.b.String()
}

// removeNetworkByHand does what an operator did: every container off the
// install's network (`docker network disconnect -f`), then `docker
// network rm`.
func (f *engineFixture) removeNetworkByHand() {
	f.t.Helper()
	name := "wb-net-" + f.installID
	n, err := f.cli.NetworkInspect(f.ctx, name, network.InspectOptions{})
	if err != nil {
		f.t.Fatal(err)
	}
	for id := range n.Containers {
		if err := f.cli.NetworkDisconnect(f.ctx, n.ID, id, true); err != nil {
			f.t.Fatal(err)
		}
	}
	if err := f.cli.NetworkRemove(f.ctx, n.ID); err != nil {
		f.t.Fatal(err)
	}
}

// A running workbench whose container was taken off the portal's network
// (the network removed by hand) is put back on it by the next
// reconciliation, with one warning naming it, and Jupyter answers at the
// address the proxy uses again. The portal used to log nothing and leave
// it "running", charged and unreachable.
func TestReconcileReconnectsRunningWorkbenchOffNetwork(t *testing.T) {
	if testing.Short() {
		t.Skip("real engine")
	}
	f := newEngineFixture(t, nil, Options{})
	wb := f.launch("netless")
	wb = f.waitRunning(wb.ID)
	f.removeNetworkByHand()

	var logs lockedBuffer
	m := NewManager(f.store, f.m.pool, f.docker, f.installID, Options{}, slog.New(slog.NewTextHandler(&logs, nil)))
	for range 2 {
		if err := m.Reconcile(f.ctx); err != nil {
			t.Fatal(err)
		}
	}
	got, err := f.store.WorkbenchByID(f.ctx, wb.ID)
	if err != nil {
		t.Fatal(err)
	}
	if got.State != models.StateRunning || got.Endpoint == "" {
		t.Fatalf("state %s endpoint %q; want running with an address", got.State, got.Endpoint)
	}
	info, err := f.docker.Inspect(f.ctx, got.ContainerID)
	if err != nil {
		t.Fatal(err)
	}
	if ip := info.IPs["wb-net-"+f.installID]; ip == "" || !strings.HasPrefix(got.Endpoint, ip+":") {
		t.Fatalf("container's addresses %v, recorded endpoint %q: not back on the portal's network", info.IPs, got.Endpoint)
	}
	if !m.jupyterAnswers(f.ctx, got.Endpoint, got.ID, got.Token) {
		t.Fatalf("Jupyter does not answer at %s after the reconnection", got.Endpoint)
	}
	out := logs.String()
	if n := strings.Count(out, "off the portal's network"); n != 1 || !strings.Contains(out, "level=WARN") || !strings.Contains(out, "name=netless") {
		t.Fatalf("want one warning naming the workbench, got %d in:\n%s", n, out)
	}
}

// Starting a stopped workbench whose network was removed by hand makes the
// network again and starts the same container on it. The first start used
// to fail with the engine's raw "network … not found" as its reason.
func TestStartAfterNetworkRemovedByHand(t *testing.T) {
	if testing.Short() {
		t.Skip("real engine")
	}
	f := newEngineFixture(t, nil, Options{})
	wb := f.launch("restart-netless")
	wb = f.waitRunning(wb.ID)
	if err := f.m.Stop(f.ctx, wb.ID, "test"); err != nil {
		t.Fatal(err)
	}
	f.m.Wait()
	if got, _ := f.store.WorkbenchByID(f.ctx, wb.ID); got.State != models.StateStopped {
		t.Fatalf("state %s after stop", got.State)
	}
	// The stopped container keeps its attachment to the network's id;
	// removing the network leaves that id dangling.
	if err := f.cli.NetworkRemove(f.ctx, "wb-net-"+f.installID); err != nil {
		t.Fatal(err)
	}
	if err := f.m.Start(f.ctx, wb.ID, f.user); err != nil {
		t.Fatal(err)
	}
	deadline := time.Now().Add(3 * time.Minute)
	for {
		got, err := f.store.WorkbenchByID(f.ctx, wb.ID)
		if err != nil {
			t.Fatal(err)
		}
		if got.State == models.StateFailed {
			t.Fatalf("the first start failed: %s", got.Reason)
		}
		if got.State == models.StateRunning {
			if got.ContainerID != wb.ContainerID {
				t.Fatalf("container %s replaced by %s; the same one should start again", wb.ContainerID, got.ContainerID)
			}
			if !f.m.jupyterAnswers(f.ctx, got.Endpoint, got.ID, got.Token) {
				t.Fatalf("Jupyter does not answer at %s", got.Endpoint)
			}
			return
		}
		if time.Now().After(deadline) {
			t.Fatalf("stuck in %s", got.State)
		}
		time.Sleep(50 * time.Millisecond)
	}
}
