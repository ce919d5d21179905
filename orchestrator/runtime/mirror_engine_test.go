package runtime

import (
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/docker/docker/api/types/image"

	"workbench/internal/testsupport/testimages"
)

// A pull of a registry that has a mirror goes to the mirror (here a
// registry on loopback standing in for registry.example.cn), reports its
// progress in bytes, and leaves the image under the catalog's reference;
// by digest too, where the image is then found under the mirror's name.
func TestPullThroughMirror(t *testing.T) {
	e := newEngineEnv(t)
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	reg, err := testimages.ServeRandomImage(ctx, e.d.cli, 2<<20)
	if err != nil {
		t.Fatal(err)
	}
	defer reg.Close()
	mirrorHost, repoTag, _ := strings.Cut(reg.Ref, "/")
	repo, _, _ := strings.Cut(repoTag, ":")
	const blocked = "blocked-registry.invalid:5000" // resolves nowhere: only the mirror can serve it
	original := blocked + "/" + repoTag
	byDigest := blocked + "/" + repo + "@" + reg.ManifestDigest()
	t.Cleanup(func() {
		for _, r := range []string{original, reg.Ref, mirrorHost + "/" + repo + "@" + reg.ManifestDigest()} {
			_, _ = e.d.cli.ImageRemove(context.Background(), r, image.RemoveOptions{Force: true, PruneChildren: true})
		}
	})
	e.d.SetMirrorSource(func(context.Context) (Mirrors, error) {
		return ParseMirrors(blocked + " = " + mirrorHost)
	})
	t.Cleanup(func() { e.d.SetMirrorSource(nil) })

	var statuses []string
	var last PullProgress
	if err := e.d.PullImage(ctx, original, func(p PullProgress) { statuses = append(statuses, p.Status); last = p }); err != nil {
		t.Fatal(err)
	}
	if !slices.ContainsFunc(statuses, func(s string) bool { return strings.Contains(s, "from the mirror "+mirrorHost) }) {
		t.Errorf("the status never names the mirror: %q", statuses)
	}
	if last.Percent != 100 || last.TotalBytes < 2<<20 || last.Mirror != reg.Ref {
		t.Errorf("last progress %+v: want 100%% of at least 2 MiB", last)
	}
	if present, size, err := e.d.ImageSize(ctx, original); err != nil || !present || size < 2<<20 {
		t.Fatalf("the image is not there under its catalog reference: %v %d %v", present, size, err)
	}

	// By digest: nothing local, pulled from the mirror by the same digest.
	for _, r := range []string{original, reg.Ref} {
		_, _ = e.d.cli.ImageRemove(ctx, r, image.RemoveOptions{Force: true, PruneChildren: true})
	}
	if present, _, _ := e.d.ImageSize(ctx, byDigest); present {
		t.Fatal("the image is still there before the digest pull")
	}
	if err := e.d.PullImage(ctx, byDigest, nil); err != nil {
		t.Fatal(err)
	}
	if present, _, err := e.d.ImageSize(ctx, byDigest); err != nil || !present {
		t.Fatalf("the digest reference is not found after its pull: %v %v", present, err)
	}
}

// `workbench image load` and the admin upload hand a `docker save`
// archive to the engine: the image comes back under its name.
func TestLoadImageFromDockerSave(t *testing.T) {
	e := newEngineEnv(t)
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	name := "workbench-test/loadable:" + e.run
	if err := e.d.cli.ImageTag(ctx, e.image, name); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		_, _ = e.d.cli.ImageRemove(context.Background(), name, image.RemoveOptions{})
	})
	archive := filepath.Join(t.TempDir(), "image.tar")
	if out, err := exec.CommandContext(ctx, "docker", "save", "-o", archive, name).CombinedOutput(); err != nil {
		t.Fatalf("docker save: %v %s", err, out)
	}
	if _, err := e.d.cli.ImageRemove(ctx, name, image.RemoveOptions{}); err != nil {
		t.Fatal(err)
	}
	if present, _, _ := e.d.ImageSize(ctx, name); present {
		t.Fatal("still there before the load")
	}
	f, err := os.Open(archive)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	names, err := e.d.LoadImage(ctx, f)
	if err != nil || !slices.Contains(names, name) {
		t.Fatalf("loaded %q, %v; want %s", names, err, name)
	}
	if present, _, err := e.d.ImageSize(ctx, name); !present || err != nil {
		t.Fatalf("not there after the load: %v", err)
	}
	// Not an archive: a clear error, nothing loaded.
	if _, err := e.d.LoadImage(ctx, strings.NewReader("not a tar")); err == nil || !strings.Contains(err.Error(), "docker save") {
		t.Errorf("garbage loaded: %v", err)
	}
}
