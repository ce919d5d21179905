package orchestrator

import (
	"context"
	"log/slog"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"workbench/models"
)

// A database restored from a `workbench backup` knows a running workbench
// up to the backup's taking. If the portal stopped and started it after
// the backup (the owner's stop and start reuse the container), the
// restored portal finds the container started after its open run began:
// the run is split as for a restart outside the portal, but the log must
// not say "restarted outside the portal" — it says it was started again
// after the backup. A restart outside the portal after the restored
// portal has seen the run alive keeps the old line.
func TestMemRestoredBackupDoesNotCallThePortalsRestartOutside(t *testing.T) {
	t.Parallel()
	r := newMemRig(t)
	ctx := context.Background()
	before, err := r.store.OpenIntervalOf(ctx, r.wb.ID)
	if err != nil {
		t.Fatal(err)
	}
	backup := filepath.Join(t.TempDir(), "backup.db")
	if err := r.store.Backup(ctx, backup); err != nil {
		t.Fatal(err)
	}
	// After the backup, the portal stops and starts the workbench: as
	// Docker reports the container then, running since the new start,
	// the last exit kept. (Moved forward: the clock of this test is the
	// engine's report, not a wait.)
	c, _ := r.rt.Container("c-" + r.wb.ID)
	exited := time.Now().UTC().Add(20 * time.Second)
	restarted := exited.Add(40 * time.Second)
	c.StartedAt, c.FinishedAt = restarted, exited
	r.rt.AddContainer(c)

	// The restore: the backup is the data directory's database.
	dir := t.TempDir()
	data, err := os.ReadFile(backup)
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(dir, models.DBFileName), data, 0o600); err != nil {
		t.Fatal(err)
	}
	restored, err := models.Open(ctx, dir, r.m.log)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { restored.Close() })
	logs := &lockedLog{}
	m := NewManager(restored, NewPool(r.m.pool.inv, nil, restored), r.rt, r.m.installID, Options{}, slog.New(slog.NewTextHandler(logs, nil)))
	t.Cleanup(m.Wait)
	if err := m.Reconcile(ctx); err != nil {
		t.Fatal(err)
	}
	ivs, err := restored.IntervalsOf(ctx, r.wb.ID)
	if err != nil {
		t.Fatal(err)
	}
	if len(ivs) != 2 || !ivs[0].StartedAt.Equal(before.StartedAt) || ivs[0].EndedAt == nil || !ivs[0].EndedAt.Equal(exited) || !ivs[1].StartedAt.Equal(restarted) {
		t.Fatalf("want the run split at the exit %s and the start %s, got %+v", exited, restarted, ivs)
	}
	if strings.Contains(logs.String(), "restarted outside the portal") {
		t.Errorf("the restored portal called its own restart one outside it:\n%s", logs)
	}
	if !strings.Contains(logs.String(), "started again after the backup this database was restored from") {
		t.Errorf("no line saying the container started after the backup:\n%s", logs)
	}

	// Seen alive by the restored portal, then restarted behind its back:
	// that is outside the portal.
	if err := restored.HeartbeatIntervals(ctx, []string{r.wb.ID}, restarted.Add(time.Minute)); err != nil {
		t.Fatal(err)
	}
	c.FinishedAt, c.StartedAt = restarted.Add(2*time.Minute), restarted.Add(3*time.Minute)
	r.rt.AddContainer(c)
	if err := m.Reconcile(ctx); err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(logs.String(), "reconcile: container restarted outside the portal") {
		t.Errorf("a restart after the restore is not told as outside the portal:\n%s", logs)
	}
}
