package orchestrator

import (
	"context"
	"io"
	"log/slog"
	"testing"
)

// A copy of the install (a restored backup started beside the original
// with --new-identity, on the same engine) holds the original's saved
// images in its catalog. Deleting one there removed the original's image
// from the engine while the original still listed it (its launches then
// failed, the files gone). The copy deletes its entry only; its own saved
// images it removes from the engine as before.
func TestMemCopyDeletesOnlyItsOwnSavedImageFiles(t *testing.T) {
	t.Parallel()
	r := newMemRig(t)
	ctx := context.Background()
	owner, err := r.store.UserByID(ctx, r.wb.OwnerID)
	if err != nil {
		t.Fatal(err)
	}
	original, err := r.m.SaveImage(ctx, r.wb.ID, owner, SaveImageRequest{Name: "env", RunningOK: true})
	if err != nil {
		t.Fatal(err)
	}
	// The copy: another install id on the same engine (its database is
	// this one here: only the install id matters to the engine's names).
	cp := NewManager(r.store, r.m.pool, r.rt, "memcopy", Options{}, slog.New(slog.NewTextHandler(io.Discard, nil)))
	t.Cleanup(cp.Wait)
	if err := cp.DeleteSavedImage(ctx, original); err != nil {
		t.Fatal(err)
	}
	if present, _, _ := r.rt.ImageSize(ctx, original.Image); !present {
		t.Errorf("the copy removed the original's saved image %s from the engine", original.Image)
	}
	if mine, _ := r.store.SavedImagesOf(ctx, owner.ID); len(mine) != 0 {
		t.Errorf("the copy's entry was not deleted: %+v", mine)
	}

	own, err := cp.SaveImage(ctx, r.wb.ID, owner, SaveImageRequest{Name: "copyenv", RunningOK: true})
	if err != nil {
		t.Fatal(err)
	}
	if err := cp.DeleteSavedImage(ctx, own); err != nil {
		t.Fatal(err)
	}
	if present, _, _ := r.rt.ImageSize(ctx, own.Image); present {
		t.Errorf("the copy's own saved image %s is still on the engine after its delete", own.Image)
	}
}
