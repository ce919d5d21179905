package orchestrator

import (
	"errors"
	"log/slog"
	"strings"
	"testing"
	"time"

	"workbench/models"
)

// A container paused outside the portal is noticed by reconciliation
// (warned once, naming the workbench), the proxy's target says so without
// asking the engine, and a stop still ends it and forgets the pause.
func TestReconcileNoticesPausedContainer(t *testing.T) {
	if testing.Short() {
		t.Skip("real engine")
	}
	f := newEngineFixture(t, nil, Options{})
	wb := f.launch("frozen")
	wb = f.waitRunning(wb.ID)
	if err := f.cli.ContainerPause(f.ctx, wb.ContainerID); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = f.cli.ContainerUnpause(f.ctx, wb.ContainerID) })

	var logs lockedBuffer
	m := NewManager(f.store, f.m.pool, f.docker, f.installID, Options{}, slog.New(slog.NewTextHandler(&logs, nil)))
	for range 2 {
		if err := m.Reconcile(f.ctx); err != nil {
			t.Fatal(err)
		}
	}
	got, _ := f.store.WorkbenchByID(f.ctx, wb.ID)
	if got.State != models.StateRunning || got.PausedAt == nil {
		t.Fatalf("state %s paused_at %v; want running, marked paused", got.State, got.PausedAt)
	}
	if out := logs.String(); strings.Count(out, "paused outside the portal") != 1 || !strings.Contains(out, "level=WARN") || !strings.Contains(out, "name=frozen") {
		t.Fatalf("want one warning naming the workbench:\n%s", out)
	}
	if _, err := m.ProxyTarget(f.ctx, wb.ID, f.user.ID); !errors.Is(err, ErrPaused) || !errors.Is(err, ErrNotRunning) {
		t.Fatalf("proxy target: %v; want ErrPaused", err)
	}

	// The culler does not ask the frozen Jupyter (each ask waited out
	// its 5 s timeout, holding up the culling of the others).
	began := time.Now()
	m.Cull(f.ctx)
	if took := time.Since(began); took > 4*time.Second {
		t.Errorf("a cull round took %s with a paused workbench", took)
	}

	if err := m.Stop(f.ctx, wb.ID, "test"); err != nil {
		t.Fatal(err)
	}
	m.Wait()
	got, _ = f.store.WorkbenchByID(f.ctx, wb.ID)
	if got.State != models.StateStopped || got.PausedAt != nil {
		t.Fatalf("after stop: state %s (%s) paused_at %v; want stopped, pause forgotten", got.State, got.Reason, got.PausedAt)
	}
}
