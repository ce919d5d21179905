package testimages

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"sync"

	cerrdefs "github.com/containerd/errdefs"
	"github.com/docker/docker/api/types/filters"
	"github.com/docker/docker/api/types/image"
	"github.com/docker/docker/client"
)

// FakeJupyterRepo is the repository the fake image is tagged into.
const FakeJupyterRepo = "workbench-test/fakejupyter"

// FakeJupyterStartCommand is the catalog start command for the fake image;
// the portal expands {port}, {base_url} and {token}.
const FakeJupyterStartCommand = "/fakejupyter --ip=0.0.0.0 --port={port} --base-url={base_url} --token={token}"

// FakeJupyterHome is the home directory of the image's user (uid 1000).
const FakeJupyterHome = "/home/jovyan"

const fakeDockerfile = `FROM scratch
COPY fakejupyter /fakejupyter
COPY passwd group /etc/
COPY --chown=1000:100 home/ /home/jovyan/
ENV HOME=/home/jovyan
WORKDIR /home/jovyan
USER 1000
`

// The user exists in /etc/passwd so tools that look up the uid work; gid
// 100 ("users") as in the Jupyter docker-stacks images.
const (
	fakePasswd = "root:x:0:0:root:/root:/sbin/nologin\njovyan:x:1000:100:jovyan:/home/jovyan:/sbin/nologin\n"
	fakeGroup  = "root:x:0:\nusers:x:100:jovyan\n"
	// fakeHomeKeep gives COPY something to copy, so /home/jovyan exists in
	// the image owned by 1000: a fresh named volume mounted there copies
	// that ownership and the user can write its home.
	fakeHomeKeep = "fake home\n"
)

var fake struct {
	mu     sync.Mutex
	binary []byte // built once per process
}

// FakeJupyter returns a local image running the fake Jupyter server,
// building the binary and the image when needed. The tag is derived from
// the binary's hash, so an unchanged fake reuses the image from earlier
// runs. Safe for concurrent use.
//
// The build ignores the caller's deadline: it happens once per machine and
// on a busy machine can take longer than any one test's budget; a build
// killed half-way would only fail every test that needs it.
func FakeJupyter(ctx context.Context, cli client.APIClient) (string, error) {
	ctx = context.WithoutCancel(ctx)
	fake.mu.Lock()
	defer fake.mu.Unlock()

	if fake.binary == nil {
		bin, err := buildFakeBinary(ctx)
		if err != nil {
			return "", err
		}
		fake.binary = bin
	}
	sum := sha256.Sum256(append([]byte(imageFormat+"\n"), fake.binary...))
	ref := FakeJupyterRepo + ":" + hex.EncodeToString(sum[:8])

	unlock, err := lockFile("workbench-test-fakejupyter")
	if err != nil {
		return "", fmt.Errorf("lock: %w", err)
	}
	defer unlock()

	// Checked on every call, not cached: another test may have pruned it.
	if _, err := cli.ImageInspect(ctx, ref); err == nil {
		return ref, nil
	} else if !cerrdefs.IsNotFound(err) {
		return "", fmt.Errorf("inspect %s: %w", ref, err)
	}

	files := []contextFile{
		{name: "Dockerfile", mode: 0o644, data: []byte(fakeDockerfile)},
		{name: "fakejupyter", mode: 0o755, data: fake.binary},
		{name: "passwd", mode: 0o644, data: []byte(fakePasswd)},
		{name: "group", mode: 0o644, data: []byte(fakeGroup)},
		{name: "home/.fakejupyter", mode: 0o644, data: []byte(fakeHomeKeep)},
	}
	if err := buildImage(ctx, cli, ref, files); err != nil {
		return "", err
	}
	removeStale(ctx, cli, ref)
	return ref, nil
}

func buildFakeBinary(ctx context.Context) ([]byte, error) {
	dir, err := os.MkdirTemp("", "fakejupyter-")
	if err != nil {
		return nil, err
	}
	defer os.RemoveAll(dir)
	out := filepath.Join(dir, "fakejupyter")
	if err := buildStatic(ctx, "workbench/internal/testsupport/testimages/fakejupyter", out); err != nil {
		return nil, err
	}
	return os.ReadFile(out)
}

// removeStale deletes fake images of earlier versions of the fake, so
// editing it does not pile up images. Best effort: an image still used by
// a container (another test run) is simply left.
func removeStale(ctx context.Context, cli client.APIClient, keep string) {
	imgs, err := cli.ImageList(ctx, image.ListOptions{Filters: filters.NewArgs(filters.Arg("reference", FakeJupyterRepo))})
	if err != nil {
		return
	}
	for _, img := range imgs {
		for _, tag := range img.RepoTags {
			if tag != keep && strings.HasPrefix(tag, FakeJupyterRepo+":") {
				_, _ = cli.ImageRemove(ctx, tag, image.RemoveOptions{PruneChildren: true})
			}
		}
	}
}
