package orchestrator

import (
	"context"
	"errors"
	"io"
	"log/slog"
	"testing"
	"time"

	"workbench/models"
)

// The manager's deadlines read the flavor and the owner's quota from a real
// store and the time from the injected clock; "+1 h" moves the runtime stop
// until the quota's ceiling, then is refused.
func TestManagerDeadlinesAndExtend(t *testing.T) {
	ctx := context.Background()
	s, err := models.Open(ctx, t.TempDir(), slog.New(slog.NewTextHandler(io.Discard, nil)))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { s.Close() })
	if err := s.SeedCatalog(ctx, nil); err != nil {
		t.Fatal(err)
	}
	u, err := s.CreateUser(ctx, models.NewUser{Username: "alice", Password: "correct-horse-1"})
	if err != nil {
		t.Fatal(err)
	}
	imgs, _ := s.ListImages(ctx, false)
	fls, _ := s.ListFlavors(ctx, false)
	fl := fls[0]
	fl.MaxRuntimeS = 2 * 3600
	if err := s.UpdateFlavor(ctx, &fl); err != nil {
		t.Fatal(err)
	}
	three := int64(3)
	if err := s.SetQuota(ctx, models.ScopeDefault, 0, models.Limits{MaxRuntimeHours: &three}, "test"); err != nil {
		t.Fatal(err)
	}
	wb := &models.Workbench{Name: "w", OwnerID: u.ID, ImageID: imgs[0].ID, FlavorID: fl.ID, IdleTimeoutS: 1800}
	if err := s.CreateWorkbench(ctx, wb, models.GPUNeed{}, nil); err != nil {
		t.Fatal(err)
	}
	start := time.Date(2026, 3, 2, 12, 0, 0, 0, time.UTC)
	if err := s.SetWorkbenchState(ctx, wb.ID, models.StateRunning, 100, "", map[string]any{"started_at": start}); err != nil {
		t.Fatal(err)
	}

	m := &Manager{store: s, activity: newActivityTracker()}
	m.SetClock(func() time.Time { return start.Add(25 * time.Minute) })
	m.Touch(wb.ID, start.Add(10*time.Minute)) // proxy traffic

	got, _ := s.WorkbenchByID(ctx, wb.ID)
	d := m.Deadlines(ctx, got)
	if d.IdleFor != 15*time.Minute || !d.IdleStopAt.Equal(start.Add(40*time.Minute)) {
		t.Errorf("idle for %s, stop at %s; want 15m and 12:40", d.IdleFor, d.IdleStopAt)
	}
	if !d.RuntimeStopAt.Equal(start.Add(2*time.Hour)) || !d.CanExtend {
		t.Errorf("runtime stop %s (can extend %v), want 14:00 and extendable", d.RuntimeStopAt, d.CanExtend)
	}
	d, err = m.ExtendRuntimeBy(ctx, wb.ID, "alice")
	if err != nil || !d.RuntimeStopAt.Equal(start.Add(3*time.Hour)) || d.CanExtend {
		t.Fatalf("+1 h: stop %s, can extend %v, err %v; want 15:00, no further", d.RuntimeStopAt, d.CanExtend, err)
	}
	var re *RefusedError
	if _, err := m.ExtendRuntimeBy(ctx, wb.ID, "alice"); !errors.As(err, &re) {
		t.Fatalf("+1 h past the quota's 3 h: %v, want refused", err)
	}
	// The extension was audited with it; the refusal was not.
	if entries, _ := s.ListAudit(ctx, 10); len(entries) != 1 || entries[0].Action != "workbench.extend" || entries[0].Actor != "alice" ||
		entries[0].After != `{"runtime_stop_at":"2026-03-02T15:00:00Z"}` {
		t.Fatalf("audit %+v: want one workbench.extend row to 15:00", entries)
	}
	got, _ = s.WorkbenchByID(ctx, wb.ID)
	if r := runtimeReason(m.runtimeRule(ctx, got), got, start.Add(3*time.Hour-time.Second)); r != "" {
		t.Errorf("the culler would stop the extended run before 15:00: %q", r)
	}
	if r := runtimeReason(m.runtimeRule(ctx, got), got, start.Add(3*time.Hour)); r == "" {
		t.Error("the culler would not stop the extended run at 15:00")
	}
}
