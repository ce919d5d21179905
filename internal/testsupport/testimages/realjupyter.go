// debootstrap, chroot and the /proc mount make the build Linux-only, and the
// build's cancellation relies on Linux process groups.

//go:build linux

package testimages

import (
	"bytes"
	"context"
	"crypto/sha256"
	_ "embed" // for the debootstrap script
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"os"
	"os/exec"
	"path/filepath"
	"syscall"
	"time"

	"github.com/docker/docker/api/types/filters"
	"github.com/docker/docker/api/types/image"
	"github.com/docker/docker/client"
)

// RealJupyterRepo is the repository part of the image reference RealJupyter
// produces; the tag is derived from the build script (see RealJupyterRef).
const RealJupyterRepo = "workbench-test/jupyter-debian"

// RealJupyterStartCommand is the catalog start-command template for the
// image RealJupyter builds; the portal substitutes {port}, {base_url} and
// {token}.
//
// Debian bookworm ships the classic Notebook 6.4.12 (python3-notebook), not
// JupyterLab/jupyter_server, so the options live under NotebookApp, not
// ServerApp. `jupyter notebook` works because the image also carries the
// jupyter-core and jupyter-notebook packages (the CLI entry points).
//
//   - --ip=0.0.0.0: the portal reaches the container over the bridge network.
//   - --NotebookApp.token: Notebook 6 accepts it both as ?token= and as the
//     `Authorization: token X` header the portal's proxy injects, and skips its
//     XSRF and Origin checks for token-authenticated requests (so the portal
//     must check the origin itself; see SPEC §4).
//   - --NotebookApp.allow_origin=*: the browser's Origin is the portal's, not
//     the container's. Token-authenticated requests pass without it (checked
//     against this image), but a request authenticated only by Notebook's
//     login cookie would be refused; the portal enforces the origin anyway.
//   - --NotebookApp.allow_remote_access=True: requests arrive with the
//     portal's Host header, which Notebook refuses as a DNS-rebinding guard
//     when remote access is off. --ip=0.0.0.0 already turns it on by default;
//     stating it keeps the template from depending on that inference.
//   - --NotebookApp.trust_xheaders=True: take scheme/client address from the
//     proxy's X-Forwarded-* / X-Real-Ip headers so redirects and logs are right.
//
// The template contains no shell syntax other than the literal `*`; split it
// on spaces into argv rather than passing it to a shell.
const RealJupyterStartCommand = "jupyter notebook --no-browser --ip=0.0.0.0 --port={port}" +
	" --NotebookApp.base_url={base_url} --NotebookApp.token={token}" +
	" --NotebookApp.allow_origin=* --NotebookApp.allow_remote_access=True" +
	" --NotebookApp.trust_xheaders=True"

// Facts about the image that the portal's catalog entry needs besides the
// start command.
const (
	RealJupyterUser = "1000"
	RealJupyterHome = "/home/jovyan"
)

//go:embed debootstrap-jupyter.sh
var debootstrapJupyterScript []byte

// realJupyterSem serialises RealJupyter within a process so concurrent tests
// share one build rather than each running a multi-minute debootstrap. It is
// a channel, not a sync.Mutex, so a waiting caller can give up when its
// context ends.
var realJupyterSem = make(chan struct{}, 1)

// RealJupyterRef is the image reference RealJupyter produces. The tag is a
// hash of the build script, so editing the script yields a new tag and a
// rebuild while an unchanged script reuses the cached image.
func RealJupyterRef() string {
	sum := sha256.Sum256(debootstrapJupyterScript)
	return RealJupyterRepo + ":" + hex.EncodeToString(sum[:])[:16]
}

// RealJupyter returns a local image that runs a real Jupyter Notebook server
// (see RealJupyterStartCommand), building it from Debian packages with
// debootstrap-jupyter.sh when it is not in the engine yet. Building needs
// root, debootstrap and access to the host's apt mirror, and takes minutes;
// afterwards the image is found by tag and this returns at once.
func RealJupyter(ctx context.Context, cli client.APIClient) (ref string, err error) {
	ref = RealJupyterRef()
	// Like FakeJupyter: a build, or the wait for another process's build,
	// is not bounded by one test's deadline.
	ctx = context.WithoutCancel(ctx)

	realJupyterSem <- struct{}{}
	defer func() { <-realJupyterSem }()
	// Test binaries of several packages run at once: one builds, the others
	// wait here and then find the image.
	unlock, err := lockFile("workbench-test-realjupyter")
	if err != nil {
		return "", err
	}
	defer unlock()

	ok, err := realJupyterExists(ctx, cli, ref)
	if err != nil {
		return "", err
	}
	if ok {
		return ref, nil
	}

	start := time.Now()
	slog.InfoContext(ctx, "building Jupyter test image with debootstrap; this takes minutes the first time", "ref", ref)

	dir, err := os.MkdirTemp("", "realjupyter-")
	if err != nil {
		return "", err
	}
	defer os.RemoveAll(dir)

	script := filepath.Join(dir, "debootstrap-jupyter.sh")
	if err := os.WriteFile(script, debootstrapJupyterScript, 0o755); err != nil {
		return "", err
	}
	tarPath := filepath.Join(dir, "rootfs.tar")

	// Output is kept in memory and only surfaced on failure: a successful
	// debootstrap prints thousands of lines nobody needs in test logs.
	var out bytes.Buffer
	cmd := exec.CommandContext(ctx, "bash", script, tarPath)
	cmd.Stdout = &out
	cmd.Stderr = &out
	// On cancellation, SIGTERM the script's whole process group: bash defers
	// its traps until the running child (debootstrap, apt in the chroot)
	// exits, so the children must die too for the EXIT trap to unmount /proc
	// and delete the rootfs promptly. Killing only bash would orphan them and
	// leak the mount.
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	cmd.Cancel = func() error { return syscall.Kill(-cmd.Process.Pid, syscall.SIGTERM) }
	cmd.WaitDelay = 30 * time.Second
	if err := cmd.Run(); err != nil {
		return "", fmt.Errorf("debootstrap-jupyter.sh: %w\n%s", err, lastBytes(out.Bytes(), 4000))
	}
	slog.InfoContext(ctx, "Jupyter rootfs built", "took", time.Since(start).Round(time.Second))

	if err := importRealJupyter(ctx, cli, tarPath, ref); err != nil {
		return "", err
	}
	// Confirm the tag is really there: the import stream can end without an
	// explicit error even when the engine dropped the image.
	if ok, err := realJupyterExists(ctx, cli, ref); err != nil {
		return "", err
	} else if !ok {
		return "", fmt.Errorf("image %s missing after import", ref)
	}
	slog.InfoContext(ctx, "Jupyter test image ready", "ref", ref, "took", time.Since(start).Round(time.Second))
	return ref, nil
}

// realJupyterExists reports whether ref is present in the engine. It lists with a
// reference filter instead of inspecting, so a missing image is a plain
// false rather than an error type to decode.
func realJupyterExists(ctx context.Context, cli client.APIClient, ref string) (bool, error) {
	imgs, err := cli.ImageList(ctx, image.ListOptions{Filters: filters.NewArgs(filters.Arg("reference", ref))})
	if err != nil {
		return false, fmt.Errorf("listing images for %s: %w", ref, err)
	}
	return len(imgs) > 0, nil
}

// importRealJupyter is `docker import` through the SDK. The image config a plain
// rootfs lacks (user, home, workdir, PATH) is supplied as Dockerfile-style
// changes. No label: its repository (TestRepoPrefix) finds it, and a label
// would be inherited by every container and image made from it (TestLabel).
// An image imported before, with the label, is reused while the build
// script is unchanged (its tag): rebuilding it is minutes of debootstrap.
func importRealJupyter(ctx context.Context, cli client.APIClient, tarPath, ref string) error {
	f, err := os.Open(tarPath)
	if err != nil {
		return err
	}
	defer f.Close()

	rc, err := cli.ImageImport(ctx, image.ImportSource{Source: f, SourceName: "-"}, ref, image.ImportOptions{
		Changes: []string{
			"USER " + RealJupyterUser,
			"ENV HOME=" + RealJupyterHome,
			"ENV PATH=/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin",
			// Python and Jupyter misbehave on non-ASCII file names without a
			// UTF-8 locale; C.UTF-8 is built into glibc, so no locales package.
			"ENV LANG=C.UTF-8",
			"WORKDIR " + RealJupyterHome,
		},
	})
	if err != nil {
		return fmt.Errorf("importing %s: %w", ref, err)
	}
	defer rc.Close()
	return drainImportStream(rc)
}

// drainImportStream reads an engine progress stream to its end and returns
// the first error it reports. Engine errors arrive in-band with HTTP 200, so
// ignoring the stream would hide a failed import.
func drainImportStream(r io.Reader) error {
	dec := json.NewDecoder(r)
	for {
		var m struct {
			Error       string `json:"error"`
			ErrorDetail *struct {
				Message string `json:"message"`
			} `json:"errorDetail"`
		}
		if err := dec.Decode(&m); err != nil {
			if errors.Is(err, io.EOF) {
				return nil
			}
			return fmt.Errorf("reading import progress: %w", err)
		}
		if m.ErrorDetail != nil && m.ErrorDetail.Message != "" {
			return errors.New(m.ErrorDetail.Message)
		}
		if m.Error != "" {
			return errors.New(m.Error)
		}
	}
}

// lastBytes returns the last n bytes of b, which is where a failing shell script
// prints its reason.
func lastBytes(b []byte, n int) []byte {
	if len(b) > n {
		return b[len(b)-n:]
	}
	return b
}
