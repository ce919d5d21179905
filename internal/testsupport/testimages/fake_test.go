package testimages

import (
	"context"
	"maps"
	"os/exec"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/docker/docker/api/types/container"
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
	// Found by its repository, not by a label in its config: a label there
	// is inherited by every container made from the image and every image
	// built or saved from it (workbench containers of a test portal read as
	// objects the tests made themselves, for any cleanup by TestLabel).
	if _, labelled := img.Config.Labels[TestLabel]; labelled || !strings.HasPrefix(ref, TestRepoPrefix) {
		t.Errorf("image %s labels %v: want no %s, and the repository under %s", ref, img.Config.Labels, TestLabel, TestRepoPrefix)
	}
	// A container made from it carries only its creator's labels.
	own := map[string]string{"workbench.install": "test-labels-" + strconv.FormatInt(time.Now().UnixNano(), 36)}
	c, err := cli.ContainerCreate(ctx, &container.Config{Image: ref, Cmd: []string{"/fakejupyter", "--help"}, Labels: own}, nil, nil, nil, "")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = cli.ContainerRemove(context.Background(), c.ID, container.RemoveOptions{Force: true}) })
	info, err := cli.ContainerInspect(ctx, c.ID)
	if err != nil {
		t.Fatal(err)
	}
	if !maps.Equal(info.Config.Labels, own) {
		t.Errorf("container labels %v, want only its creator's %v", info.Config.Labels, own)
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
