package runtime

import (
	"context"
	"errors"
	"net/http"
	"testing"
	"time"
)

// TestHomeVolumePersists: a file written in $HOME survives removing the
// container and is there in a new container on the same volume.
func TestHomeVolumePersists(t *testing.T) {
	t.Parallel()
	e := newEngineEnv(t)
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()

	net := e.network(t, ctx, "bob")
	vol := "wbtest-" + e.run + "-home-bob"
	if created, err := e.d.EnsureVolume(ctx, vol, e.labels()); err != nil || !created {
		t.Fatalf("EnsureVolume: created %v, %v", created, err)
	}
	if created, err := e.d.EnsureVolume(ctx, vol, e.labels()); err != nil || created {
		t.Fatalf("second EnsureVolume: created %v, %v", created, err)
	}

	first, base := e.start(t, ctx, e.spec("home1", net, vol))
	if code, body, err := httpDo(ctx, "POST", base+"api/homefile?name=notes.txt", "kept"); err != nil || code != http.StatusNoContent {
		t.Fatalf("write home file: %d %v %s", code, err, body)
	}
	if err := e.d.Remove(ctx, first.ID); err != nil {
		t.Fatal(err)
	}

	second, base := e.start(t, ctx, e.spec("home2", net, vol))
	code, body, err := httpDo(ctx, "GET", base+"api/homefile?name=notes.txt", "")
	if err != nil || code != http.StatusOK || body != "kept" {
		t.Fatalf("read home file in new container: %d %v %q", code, err, body)
	}

	// A volume in use is not removed; once free it is, and again is fine.
	if err := e.d.RemoveVolume(ctx, vol); !errors.Is(err, ErrConflict) {
		t.Errorf("remove volume in use: %v, want ErrConflict", err)
	}
	if err := e.d.Remove(ctx, second.ID); err != nil {
		t.Fatal(err)
	}
	if err := e.d.RemoveVolume(ctx, vol); err != nil {
		t.Fatal(err)
	}
	if err := e.d.RemoveVolume(ctx, vol); err != nil {
		t.Errorf("second RemoveVolume: %v", err)
	}
}
