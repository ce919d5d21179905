package orchestrator

import (
	"context"
	"errors"
	"io"
	"log/slog"
	"sync"
	"testing"
	"time"

	"workbench/models"
	"workbench/orchestrator/runtime"
)

// Two save names that differ only in case or punctuation would be one
// engine image (its name is folded to lower case and dashes): the second is
// refused before anything is committed, so it neither replaces nor (when
// the catalog then refused it) deletes the first's image. A ref that is
// taken anyway (a leftover tag) is never re-tagged: the save takes the
// next version.
func TestSavedImageNamesNeverShareAnEngineImage(t *testing.T) {
	r := newMemRig(t)
	ctx := context.Background()
	owner, err := r.store.UserByID(ctx, r.wb.OwnerID)
	if err != nil {
		t.Fatal(err)
	}
	first, err := r.m.SaveImage(ctx, r.wb.ID, owner, SaveImageRequest{Name: "tf.env", RunningOK: true})
	if err != nil {
		t.Fatal(err)
	}
	for _, name := range []string{"tf_env", "TF.env", "Tf-Env"} {
		_, err := r.m.SaveImage(ctx, r.wb.ID, owner, SaveImageRequest{Name: name, RunningOK: true})
		var ve *models.ValidationError
		if !errors.As(err, &ve) || ve.Field != "name" {
			t.Fatalf("save as %q beside tf.env: %v, want the name refused", name, err)
		}
	}
	if present, _, _ := r.m.ImageSize(ctx, first.Image); !present {
		t.Fatal("the refused saves removed tf.env's image")
	}
	// The same name adds a version.
	v2, err := r.m.SaveImage(ctx, r.wb.ID, owner, SaveImageRequest{Name: "tf.env", RunningOK: true})
	if err != nil || v2.Version != 2 || v2.Image == first.Image {
		t.Fatalf("second save of tf.env: %+v (%v)", v2, err)
	}
	// A tag left on the engine under the next version's name is skipped.
	leftover := r.m.savedImageRef(owner.ID, "other", 1)
	r.rt.AddImage(leftover, 1)
	other, err := r.m.SaveImage(ctx, r.wb.ID, owner, SaveImageRequest{Name: "other", RunningOK: true})
	if err != nil || other.Image == leftover {
		t.Fatalf("save over a leftover tag: %+v (%v), want another version's name", other, err)
	}
}

// A double click on "Save as image": two saves of one name at once both
// succeed as two versions, each with its own engine image (they picked
// the same version and engine name, and the one the catalog refused
// removed the image the other's entry pointed at).
func TestSavedImageTwoSavesAtOnceKeepBothImages(t *testing.T) {
	r := newMemRig(t)
	ctx := context.Background()
	owner, err := r.store.UserByID(ctx, r.wb.OwnerID)
	if err != nil {
		t.Fatal(err)
	}
	// Commits take a while (as on an engine): each waits for the other
	// save's commit to begin too, for up to a second — saves that run one
	// after the other just wait that second.
	slow := &meetingCommits{Runtime: r.rt, met: make(chan struct{})}
	m := NewManager(r.store, r.m.pool, slow, "memtest", Options{}, slog.New(slog.NewTextHandler(io.Discard, nil)))
	t.Cleanup(m.Wait)
	type result struct {
		img *models.Image
		err error
	}
	results := make(chan result, 2)
	start := make(chan struct{})
	for range 2 {
		go func() {
			<-start
			img, err := m.SaveImage(ctx, r.wb.ID, owner, SaveImageRequest{Name: "myenv", RunningOK: true})
			results <- result{img, err}
		}()
	}
	close(start)
	for range 2 {
		res := <-results
		if res.err != nil {
			t.Errorf("a save failed: %v", res.err)
			continue
		}
		if present, _, _ := m.ImageSize(ctx, res.img.Image); !present {
			t.Errorf("%s: its engine image %s is gone", res.img.Name, res.img.Image)
		}
	}
}

// meetingCommits is an engine whose Commit waits (up to a second) until two
// commits have begun.
type meetingCommits struct {
	runtime.Runtime
	mu      sync.Mutex
	entered int
	met     chan struct{}
}

func (m *meetingCommits) Commit(ctx context.Context, id string, spec runtime.CommitSpec) (runtime.SavedImage, error) {
	m.mu.Lock()
	if m.entered++; m.entered == 2 {
		close(m.met)
	}
	m.mu.Unlock()
	select {
	case <-m.met:
	case <-time.After(time.Second):
	}
	return m.Runtime.Commit(ctx, id, spec)
}
