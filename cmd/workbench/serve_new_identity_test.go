package main

import (
	"bytes"
	"context"
	"strings"
	"testing"
	"time"

	"workbench/models"
)

// --new-identity asks the engine whether a running portal uses this very
// data (its install lease) before it rewrites the install id. With the
// engine not answering it cannot tell, and the rewrite on the original's
// data is what closed the live workbenches: it refuses, rewriting nothing.
// (The refusal on a running portal's data: web/lease_new_identity_test.go.)
func TestServeNewIdentityRefusedWhileTheEngineDoesNotAnswer(t *testing.T) {
	dir := portalData(t)
	ctx := context.Background()
	idOf := func() string {
		s, err := models.Open(ctx, dir, nil)
		if err != nil {
			t.Fatal(err)
		}
		defer s.Close()
		id, err := s.InstallID(ctx)
		if err != nil {
			t.Fatal(err)
		}
		return id
	}
	was := idOf()
	t.Setenv("DOCKER_HOST", "unix://"+dir+"/no-engine.sock")
	// Bounded: the old code rewrote the id and then served on.
	rctx, cancel := context.WithTimeout(ctx, 30*time.Second)
	defer cancel()
	var out, errb bytes.Buffer
	err := run(rctx, []string{"serve", "--new-identity", "--data-dir", dir, "--gpus", "none", "--addr", "127.0.0.1:0"},
		strings.NewReader(""), &out, &errb)
	if err == nil || !strings.HasPrefix(err.Error(), "--new-identity: refused, nothing was changed: the container engine does not answer") ||
		!strings.Contains(err.Error(), "start again once the engine answers") {
		t.Fatalf("serve --new-identity with no engine: %v\n%s%s", err, out.String(), errb.String())
	}
	if got := idOf(); got != was {
		t.Fatalf("install id %s became %s", was, got)
	}
}
