package orchestrator

import (
	"context"
	"errors"
	"testing"

	"workbench/models"
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
