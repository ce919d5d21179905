package runtime

import (
	"context"
	"errors"
	"strings"
	"testing"
	"time"
)

func TestEnsureImage(t *testing.T) {
	t.Parallel()
	e := newEngineEnv(t)
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()

	called := false
	if err := e.d.EnsureImage(ctx, e.image, func(int, string) { called = true }); err != nil {
		t.Fatalf("local image: %v", err)
	}
	if called {
		t.Error("progress reported for an image already present")
	}

	// No registry is reachable here (and 127.0.0.1:1 never is): the pull
	// fails with an error a user can read.
	for _, ref := range []string{"127.0.0.1:1/workbench-test/missing:1", "Not/A:Valid::Ref"} {
		err := e.d.EnsureImage(ctx, ref, nil)
		var pe *PullError
		if !errors.As(err, &pe) {
			t.Errorf("EnsureImage(%s) = %v, want *PullError", ref, err)
			continue
		}
		if errors.Is(err, ErrEngineUnavailable) || pe.Reason == "" || strings.Contains(pe.Error(), "Error response from daemon") {
			t.Errorf("EnsureImage(%s) error not readable: %q", ref, err)
		}
		t.Logf("EnsureImage(%s): %v (details: %s)", ref, err, pe.Details)
	}
	// The unreachable registry is named, with what to do, in one sentence;
	// the engine's error chain stays in Details.
	err := e.d.EnsureImage(ctx, "127.0.0.1:1/workbench-test/missing:1", nil)
	var pe *PullError
	want := "this server cannot download from 127.0.0.1:1 — ask an admin to pre-pull the image or configure a registry mirror"
	if !errors.As(err, &pe) || pe.Error() != want || !strings.Contains(pe.Details, "127.0.0.1:1") || pe.Details == pe.Reason {
		t.Errorf("unreachable registry: %q (details %q), want %q", err, pe.Details, want)
	}
}

func TestHasNVIDIA(t *testing.T) {
	t.Parallel()
	e := newEngineEnv(t)
	ok, err := e.d.HasNVIDIA(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	t.Logf("engine has NVIDIA support: %v", ok)
}
