package orchestrator

import (
	"context"
	"io"
	"log/slog"
	"strings"
	"testing"

	"workbench/orchestrator/runtime"
)

// commitThenDie is an engine whose Commit makes the image, then holds (the
// portal process "dies" before it enters the image in the catalog).
type commitThenDie struct {
	runtime.Runtime
	g *gate
}

func (e *commitThenDie) Commit(ctx context.Context, id string, spec runtime.CommitSpec) (runtime.SavedImage, error) {
	saved, err := e.Runtime.Commit(ctx, id, spec)
	e.g.hold()
	return saved, err
}

// A "Save as image" the portal was killed in after the commit left an
// image on the engine that no catalog entry, quota or page knew of. The
// next process removes it and tells the owner to save again; a saved
// image in the catalog, and a save that process itself has under way,
// are left alone.
func TestMemSaveCutShortLeavesNoImageBehind(t *testing.T) {
	t.Parallel()
	r := newMemRig(t)
	ctx := context.Background()
	owner, err := r.store.UserByID(ctx, r.wb.OwnerID)
	if err != nil {
		t.Fatal(err)
	}
	kept, err := r.m.SaveImage(ctx, r.wb.ID, owner, SaveImageRequest{Name: "kept", RunningOK: true})
	if err != nil {
		t.Fatal(err)
	}

	// The save the process dies in: committed, never catalogued.
	g := newGate()
	dying := NewManager(r.store, r.m.pool, &commitThenDie{Runtime: r.rt, g: g}, "memtest", Options{}, slog.New(slog.NewTextHandler(io.Discard, nil)))
	t.Cleanup(func() { g.open(); dying.Wait() })
	go func() {
		_, _ = dying.SaveImage(context.Background(), r.wb.ID, owner, SaveImageRequest{Name: "lost", RunningOK: true})
	}()
	g.arrived(t, "the commit")
	lost := r.m.savedImageRef(owner.ID, "lost", 1)
	if present, _, _ := r.rt.ImageSize(ctx, lost); !present {
		t.Fatalf("the commit made no image %s", lost)
	}

	// The next process; it has a save of its own under way.
	next := NewManager(r.store, r.m.pool, r.rt, "memtest", Options{}, slog.New(slog.NewTextHandler(io.Discard, nil)))
	t.Cleanup(next.Wait)
	own := r.m.savedImageRef(owner.ID, "own", 1)
	if _, err := r.rt.Commit(ctx, r.wb.ContainerID, runtime.CommitSpec{Ref: own, Labels: map[string]string{
		runtime.LabelKind: runtime.KindSavedImage, runtime.LabelInstall: "memtest", runtime.LabelSavedFrom: r.wb.ID}}); err != nil {
		t.Fatal(err)
	}
	next.savingRefs.Store(own, true)
	next.removeUnfinishedSaves(ctx)

	if present, _, _ := r.rt.ImageSize(ctx, lost); present {
		t.Errorf("the image of the save cut short (%s) is still on the engine", lost)
	}
	if present, _, _ := r.rt.ImageSize(ctx, kept.Image); !present {
		t.Errorf("the catalogued saved image %s was removed", kept.Image)
	}
	if present, _, _ := r.rt.ImageSize(ctx, own); !present {
		t.Errorf("the save under way in the new process (%s) lost its image", own)
	}
	notes, err := r.store.ListNotifications(ctx, owner.ID, 10)
	if err != nil {
		t.Fatal(err)
	}
	told := false
	for _, n := range notes {
		told = told || (strings.Contains(n.Message, "cut short") && strings.Contains(n.Message, r.wb.Name) && n.Link == "/workbenches/"+r.wb.ID)
	}
	if !told {
		t.Errorf("the owner was not told to save again: %+v", notes)
	}
	if imgs, _ := r.store.SavedImagesOf(ctx, owner.ID); len(imgs) != 1 || imgs[0].ID != kept.ID {
		t.Errorf("the owner's saved images: %+v, want only %s", imgs, kept.Name)
	}
}
