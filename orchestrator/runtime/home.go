package runtime

import (
	"archive/tar"
	"bytes"
	"context"
	"fmt"
	"io"
	"path"
	"strconv"
	"strings"
	"time"

	"github.com/docker/docker/api/types/container"
)

// PrepareHome makes a fresh home volume belong to user (the container's
// run-as user: "uid", "uid:gid" or a name from the image's /etc/passwd).
// Call it after Create (the engine copies the image's directory at the home
// path into an empty volume then, with that directory's owner) and before
// Start.
//
// Nothing runs for it: no process of the image, no capability. The engine
// unpacks a one-entry archive — the home directory itself, owned by the
// user, with its current permission bits — into the created container, and
// so chowns the volume's root. That works for images without a shell or
// chown (FROM scratch), and the workbench keeps running with every
// capability dropped. Only the home directory's owner changes: files the
// image put inside keep theirs, and so do the bits (an image that ships its
// home read-only stays read-only, and Test image says so).
//
// The engine's own "copy UID/GID" option is not used: Docker 20.10 looks
// the user up on the host, not in the image.
func (d *Docker) PrepareHome(ctx context.Context, containerID, homePath, user string) error {
	uid, gid, err := d.ResolveUser(ctx, containerID, user)
	if err != nil {
		return err
	}
	st, err := d.cli.ContainerStatPath(ctx, containerID, homePath)
	if err != nil {
		return engineErr("stat home "+homePath, err)
	}
	if !st.Mode.IsDir() {
		return fmt.Errorf("home path %s is not a directory in the image", homePath)
	}
	var buf bytes.Buffer
	tw := tar.NewWriter(&buf)
	hdr := &tar.Header{Typeflag: tar.TypeDir, Name: path.Base(homePath) + "/", Mode: int64(st.Mode.Perm()),
		Uid: uid, Gid: gid, ModTime: time.Now()}
	if err := tw.WriteHeader(hdr); err != nil {
		return err
	}
	if err := tw.Close(); err != nil {
		return err
	}
	err = d.cli.CopyToContainer(ctx, containerID, path.Dir(homePath), &buf, container.CopyToContainerOptions{})
	return engineErr("set owner of home "+homePath, err)
}

// ResolveUser turns a run-as user into the uid and gid the engine will run
// it with: "uid:gid" as it is, a bare uid with gid = uid (as the portal
// always asks for it, see models.ContainerUser), a name through the image's
// /etc/passwd.
func (d *Docker) ResolveUser(ctx context.Context, containerID, user string) (int, int, error) {
	name, group, hasGroup := strings.Cut(user, ":")
	uid, err := strconv.Atoi(name)
	if err == nil {
		if !hasGroup {
			return uid, uid, nil
		}
		gid, err := strconv.Atoi(group)
		if err != nil {
			return 0, 0, fmt.Errorf("group %q of user %q: give a numeric gid", group, user)
		}
		return uid, gid, nil
	}
	passwd, err := d.readFile(ctx, containerID, "/etc/passwd")
	if err != nil {
		return 0, 0, fmt.Errorf("unable to find user %s: the image has no /etc/passwd", name)
	}
	for _, line := range strings.Split(passwd, "\n") {
		f := strings.Split(line, ":")
		if len(f) < 4 || f[0] != name {
			continue
		}
		u, err1 := strconv.Atoi(f[2])
		g, err2 := strconv.Atoi(f[3])
		if err1 == nil && err2 == nil {
			return u, g, nil
		}
	}
	return 0, 0, fmt.Errorf("unable to find user %s: no matching entries in passwd file", name)
}

// readFile reads one small file out of a container through the archive API.
func (d *Docker) readFile(ctx context.Context, containerID, file string) (string, error) {
	rc, _, err := d.cli.CopyFromContainer(ctx, containerID, file)
	if err != nil {
		return "", engineErr("read "+file, err)
	}
	defer rc.Close()
	tr := tar.NewReader(rc)
	if _, err := tr.Next(); err != nil {
		return "", err
	}
	b, err := io.ReadAll(io.LimitReader(tr, 1<<20))
	return string(b), err
}

// HomeOwner reports the owner and permission bits of a container's home
// directory (the mounted volume's root), read through the engine's archive
// API, so no program of the image has to run.
func (d *Docker) HomeOwner(ctx context.Context, containerID, homePath string) (uid, gid int, mode int64, err error) {
	rc, _, err := d.cli.CopyFromContainer(ctx, containerID, homePath)
	if err != nil {
		return 0, 0, 0, engineErr("read home "+homePath, err)
	}
	defer rc.Close()
	hdr, err := tar.NewReader(rc).Next()
	if err != nil {
		return 0, 0, 0, fmt.Errorf("read home %s: %w", homePath, err)
	}
	return hdr.Uid, hdr.Gid, hdr.Mode, nil
}

// ProcessUser reports the uid and gid the container's first process runs
// as, as the host's process table sees it.
func (d *Docker) ProcessUser(ctx context.Context, containerID string) (uid, gid int, err error) {
	top, err := d.cli.ContainerTop(ctx, containerID, []string{"-o", "pid,uid,gid"})
	if err != nil {
		return 0, 0, engineErr("processes of "+containerID, err)
	}
	col := map[string]int{}
	for i, t := range top.Titles {
		col[strings.ToUpper(t)] = i
	}
	iu, okU := col["UID"]
	ig, okG := col["GID"]
	if !okU || !okG || len(top.Processes) == 0 {
		return 0, 0, fmt.Errorf("processes of %s: no uid/gid in %v", containerID, top.Titles)
	}
	p := top.Processes[0]
	if uid, err = strconv.Atoi(p[iu]); err == nil {
		gid, err = strconv.Atoi(p[ig])
	}
	return uid, gid, err
}

// WriteHomeFile copies one small file (and its parent directory, rel has at
// most one) into a container's home as a tar archive, owned by user. It
// works on a running container and runs nothing inside it.
func (d *Docker) WriteHomeFile(ctx context.Context, containerID, homePath, user, rel string, content []byte) error {
	uid, gid, err := d.ResolveUser(ctx, containerID, user)
	if err != nil {
		return err
	}
	var buf bytes.Buffer
	tw := tar.NewWriter(&buf)
	now := time.Now()
	if dir := path.Dir(rel); dir != "." {
		if err := tw.WriteHeader(&tar.Header{Typeflag: tar.TypeDir, Name: dir + "/", Mode: 0o755, Uid: uid, Gid: gid, ModTime: now}); err != nil {
			return err
		}
	}
	if err := tw.WriteHeader(&tar.Header{Typeflag: tar.TypeReg, Name: rel, Mode: 0o644, Size: int64(len(content)), Uid: uid, Gid: gid, ModTime: now}); err != nil {
		return err
	}
	if _, err := tw.Write(content); err != nil {
		return err
	}
	if err := tw.Close(); err != nil {
		return err
	}
	return engineErr("write "+rel+" in the home", d.cli.CopyToContainer(ctx, containerID, homePath, &buf, container.CopyToContainerOptions{}))
}
