package orchestrator

import (
	"context"
	"io"
	"log/slog"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"workbench/models"
	"workbench/orchestrator/runtime"
)

// A database restored from a `workbench backup` does not know the images
// saved after the backup was taken. They are whole saves on the engine,
// not saves cut short: the restored portal removed them (gigabytes of a
// user's environment) and told the owner, falsely, that the save was cut
// short. It enters them in their owner's catalog again; an image a save
// left without a record before the backup is still removed.
func TestMemRestoreKeepsImagesSavedAfterTheBackup(t *testing.T) {
	t.Parallel()
	r := newMemRig(t)
	ctx := context.Background()
	owner, err := r.store.UserByID(ctx, r.wb.OwnerID)
	if err != nil {
		t.Fatal(err)
	}
	// The engine's clock: the cut-short commit an hour before the backup
	// (taken now, by the store's clock), the whole save a minute after.
	clock := time.Now().UTC().Add(-time.Hour)
	r.rt.SetClock(func() time.Time { return clock })

	// Before the backup: a save cut short (committed, never catalogued).
	cut := r.m.savedImageRef(owner.ID, "cut", 1)
	if _, err := r.rt.Commit(ctx, r.wb.ContainerID, runtime.CommitSpec{Ref: cut, Labels: map[string]string{
		runtime.LabelKind: runtime.KindSavedImage, runtime.LabelInstall: r.m.installID, runtime.LabelSavedFrom: r.wb.ID}}); err != nil {
		t.Fatal(err)
	}
	backup := filepath.Join(t.TempDir(), "backup.db")
	if err := r.store.Backup(ctx, backup); err != nil {
		t.Fatal(err)
	}
	clock = time.Now().UTC().Add(time.Minute)
	after, err := r.m.SaveImage(ctx, r.wb.ID, owner, SaveImageRequest{Name: "afterbackup", RunningOK: true})
	if err != nil {
		t.Fatal(err)
	}

	// The restore.
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
	m := NewManager(restored, NewPool(r.m.pool.inv, nil, restored), r.rt, r.m.installID, Options{}, slog.New(slog.NewTextHandler(io.Discard, nil)))
	t.Cleanup(m.Wait)
	m.removeUnfinishedSaves(ctx)

	if present, _, _ := r.rt.ImageSize(ctx, after.Image); !present {
		t.Fatalf("the image saved after the backup (%s) was removed from the engine", after.Image)
	}
	if present, _, _ := r.rt.ImageSize(ctx, cut); present {
		t.Errorf("the save cut short before the backup (%s) is still on the engine", cut)
	}
	mine, err := restored.SavedImagesOf(ctx, owner.ID)
	if err != nil {
		t.Fatal(err)
	}
	if len(mine) != 1 || mine[0].Image != after.Image || mine[0].Name != after.Name || mine[0].BaseName != "afterbackup" ||
		mine[0].Version != 1 || mine[0].StartCommand != after.StartCommand || mine[0].SavedFrom != r.wb.ID {
		t.Fatalf("the owner's saved images after the restore: %+v, want %s back", mine, after.Name)
	}
	notes, err := restored.ListNotifications(ctx, owner.ID, 10)
	if err != nil {
		t.Fatal(err)
	}
	for _, n := range notes {
		if strings.Contains(n.Message, "afterbackup") && strings.Contains(n.Message, "cut short") {
			t.Errorf("the owner was told a whole save was cut short: %q", n.Message)
		}
	}
	// A second pass changes nothing (the image has its record now).
	m.removeUnfinishedSaves(ctx)
	if mine, _ := restored.SavedImagesOf(ctx, owner.ID); len(mine) != 1 {
		t.Errorf("a second pass made %d entries", len(mine))
	}
}
