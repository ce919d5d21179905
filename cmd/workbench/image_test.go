package main

import (
	"bytes"
	"context"
	"crypto/rand"
	"encoding/hex"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/docker/docker/client"

	"workbench/internal/testsupport/testimages"
	"workbench/models"
)

// `workbench image load FILE` loads a `docker save` archive of the fake
// Jupyter image (under a new name) into the engine and names what it
// loaded; a file that is no archive is a clear error.
func TestImageLoadCommand(t *testing.T) {
	if testing.Short() {
		t.Skip("real-engine test: skipped under -short")
	}
	ctx := context.Background()
	cli, err := client.NewClientWithOpts(client.FromEnv, client.WithAPIVersionNegotiation())
	if err == nil {
		_, err = cli.Ping(ctx)
	}
	if err != nil {
		t.Skipf("SKIP: no Docker engine: %v", err)
	}
	defer cli.Close()
	fake, err := testimages.FakeJupyter(ctx, cli)
	if err != nil {
		t.Fatal(err)
	}
	b := make([]byte, 4)
	_, _ = rand.Read(b)
	name := "workbench-test/cli-loaded:" + hex.EncodeToString(b)
	docker := func(args ...string) {
		t.Helper()
		if out, err := exec.Command("docker", args...).CombinedOutput(); err != nil {
			t.Fatalf("docker %s: %v %s", strings.Join(args, " "), err, out)
		}
	}
	docker("tag", fake, name)
	t.Cleanup(func() { _ = exec.Command("docker", "image", "rm", name).Run() })
	archive := filepath.Join(t.TempDir(), "image.tar")
	docker("save", "-o", archive, name)
	docker("image", "rm", name)

	var out, errOut bytes.Buffer
	dir := portalData(t)
	if err := run(ctx, []string{"image", "load", archive, "--data-dir", dir}, nil, &out, &errOut); err != nil {
		t.Fatalf("image load: %v %s", err, errOut.String())
	}
	// Audited in the portal's log, as an upload is.
	s, err := models.Open(ctx, dir, nil)
	if err != nil {
		t.Fatal(err)
	}
	audit, _ := s.ListAudit(ctx, 5)
	s.Close()
	if len(audit) == 0 || audit[0].Action != "image.load" || audit[0].Actor != "cli" || !strings.Contains(audit[0].After, name) {
		t.Errorf("audit after the load: %+v, want image.load by cli naming %s", audit, name)
	}
	if !strings.Contains(out.String(), "loaded "+name) {
		t.Errorf("printed %q, want it to name %s", out.String(), name)
	}
	if err := exec.Command("docker", "image", "inspect", name).Run(); err != nil {
		t.Errorf("not in the engine after the load: %v", err)
	}
	if err := run(ctx, []string{"image", "load", "-"}, strings.NewReader("not a tar"), &out, &errOut); err == nil {
		t.Error("garbage loaded")
	}
	if err := run(ctx, []string{"image", "load"}, nil, &out, &errOut); err == nil || !strings.Contains(err.Error(), "usage") {
		t.Errorf("no file: %v", err)
	}
}

// A directory given for the archive is named as the mistake, before the
// engine is asked (it failed mid-upload as "container engine unavailable").
func TestImageLoadRefusesADirectory(t *testing.T) {
	dir := t.TempDir()
	var out, errOut bytes.Buffer
	err := run(context.Background(), []string{"image", "load", dir}, nil, &out, &errOut)
	if err == nil || !strings.Contains(err.Error(), dir+" is a directory") || strings.Contains(err.Error(), "engine") {
		t.Fatalf("image load DIR: %v, want it to say %s is a directory", err, dir)
	}
}
