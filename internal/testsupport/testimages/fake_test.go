package testimages

import (
	"context"
	"os/exec"
	"strings"
	"testing"
	"time"

	"github.com/docker/docker/client"
)

// engine returns a client for the local engine, skipping loudly when there
// is none.
func engine(t *testing.T) client.APIClient {
	t.Helper()
	if testing.Short() {
		t.Skip("real-engine test: skipped under -short (make test runs it)")
	}
	if out, err := exec.Command("docker", "info", "--format", "{{.ServerVersion}}").CombinedOutput(); err != nil {
		t.Skipf("SKIP: no Docker engine here (docker info: %v: %s)", err, strings.TrimSpace(string(out)))
	}
	cli, err := client.NewClientWithOpts(client.FromEnv, client.WithAPIVersionNegotiation())
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { cli.Close() })
	return cli
}

func TestFakeJupyterImage(t *testing.T) {
	cli := engine(t)
	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
	defer cancel()

	ref, err := FakeJupyter(ctx, cli)
	if err != nil {
		t.Fatal(err)
	}
	if !strings.HasPrefix(ref, FakeJupyterRepo+":") {
		t.Fatalf("ref %q not in %s", ref, FakeJupyterRepo)
	}
	img, err := cli.ImageInspect(ctx, ref)
	if err != nil {
		t.Fatal(err)
	}
	if img.Config.Labels[TestLabel] != "1" {
		t.Errorf("image labels %v lack %s=1", img.Config.Labels, TestLabel)
	}
	if img.Config.User != "1000" {
		t.Errorf("image user %q, want 1000", img.Config.User)
	}
	if len(img.Config.Entrypoint) != 0 {
		t.Errorf("image has entrypoint %v; the catalog supplies the command", img.Config.Entrypoint)
	}

	// A second call, concurrently, must reuse the image, not rebuild it.
	done := make(chan string, 2)
	for range 2 {
		go func() {
			r, err := FakeJupyter(ctx, cli)
			if err != nil {
				t.Error(err)
			}
			done <- r
		}()
	}
	for range 2 {
		if r := <-done; r != ref {
			t.Errorf("second call gave %q, want %q", r, ref)
		}
	}
}
