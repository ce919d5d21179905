package testimages

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"os"

	cerrdefs "github.com/containerd/errdefs"
	"github.com/docker/docker/client"
)

// HostSFTPServer is where Debian's openssh-sftp-server puts the binary.
const HostSFTPServer = "/usr/lib/openssh/sftp-server"

// WithSFTPServer returns an image made from base (the real Jupyter image,
// Debian bookworm like the test hosts) plus the host's OpenSSH sftp-server,
// which needs only libc, at the path Debian uses. The real Jupyter image's
// build script is left alone: changing it forces a multi-minute rebuild.
// The tag hashes base and the binary, so an unchanged pair is built once.
func WithSFTPServer(ctx context.Context, cli client.APIClient, base string) (string, error) {
	bin, err := os.ReadFile(HostSFTPServer)
	if err != nil {
		return "", fmt.Errorf("host sftp-server (apt-get install openssh-sftp-server): %w", err)
	}
	h := sha256.New()
	h.Write([]byte(imageFormat + "\n"))
	h.Write([]byte(base))
	h.Write(bin)
	ref := "workbench-test/jupyter-debian-sftp:" + hex.EncodeToString(h.Sum(nil)[:8])
	unlock, err := lockFile("workbench-test-sftp")
	if err != nil {
		return "", fmt.Errorf("lock: %w", err)
	}
	defer unlock()
	if _, err := cli.ImageInspect(ctx, ref); err == nil {
		return ref, nil
	} else if !cerrdefs.IsNotFound(err) {
		return "", fmt.Errorf("inspect %s: %w", ref, err)
	}
	dockerfile := "FROM " + base + "\nCOPY sftp-server " + HostSFTPServer + "\n"
	files := []contextFile{
		{name: "Dockerfile", mode: 0o644, data: []byte(dockerfile)},
		{name: "sftp-server", mode: 0o755, data: bin},
	}
	if err := buildImage(context.WithoutCancel(ctx), cli, ref, files); err != nil {
		return "", err
	}
	return ref, nil
}
