package runtime

import (
	"context"
	"fmt"
	"io"
	"net"
	"time"

	"github.com/docker/docker/api/types"
	"github.com/docker/docker/api/types/container"
	"github.com/docker/docker/pkg/stdcopy"
)

// ExecSpec is a process to run inside a running workbench container (the
// SSH server's sessions).
type ExecSpec struct {
	Cmd        []string
	User       string // the image's run-as user; never root
	WorkingDir string
	Env        []string
	// Tty asks for a pseudo-terminal (an interactive shell): output is
	// one stream, and Height/Width size it.
	Tty           bool
	Height, Width uint
}

// Exec is a process started by Docker.Exec. Write to Stdin, read Output;
// without a Tty, Output carries stdout and Stderr stderr.
type Exec struct {
	d    *Docker
	id   string
	conn types.HijackedResponse
}

// Execer is the part of a runtime that can run processes in a container;
// the Docker runtime implements it, test runtimes need not.
type Execer interface {
	Exec(ctx context.Context, containerID string, spec ExecSpec) (*Exec, error)
	PathExists(ctx context.Context, containerID, path string) bool
}

var _ Execer = (*Docker)(nil)

// Exec starts spec in container id through the engine's exec API.
func (d *Docker) Exec(ctx context.Context, id string, spec ExecSpec) (*Exec, error) {
	if spec.User == "" || spec.User == "0" || spec.User == "root" {
		return nil, fmt.Errorf("exec: refusing to run as root")
	}
	opts := container.ExecOptions{
		User: spec.User, Tty: spec.Tty, AttachStdin: true, AttachStdout: true, AttachStderr: true,
		Env: spec.Env, WorkingDir: spec.WorkingDir, Cmd: spec.Cmd,
	}
	if spec.Tty && spec.Height > 0 && spec.Width > 0 {
		opts.ConsoleSize = &[2]uint{spec.Height, spec.Width}
	}
	created, err := d.cli.ContainerExecCreate(ctx, id, opts)
	if err != nil {
		return nil, engineErr("exec create", err)
	}
	conn, err := d.cli.ContainerExecAttach(ctx, created.ID, container.ExecAttachOptions{Tty: spec.Tty, ConsoleSize: opts.ConsoleSize})
	if err != nil {
		return nil, engineErr("exec attach", err)
	}
	e := &Exec{d: d, id: created.ID, conn: conn}
	if opts.ConsoleSize != nil {
		// Engines ignore ConsoleSize on some API versions: size the
		// terminal explicitly too (the shell gets SIGWINCH).
		if err := e.Resize(ctx, spec.Height, spec.Width); err != nil {
			d.log.Debug("exec resize", "err", err)
		}
	}
	return e, nil
}

// PathExists reports whether path exists in the container's filesystem.
func (d *Docker) PathExists(ctx context.Context, id, path string) bool {
	_, err := d.cli.ContainerStatPath(ctx, id, path)
	return err == nil
}

// Stdin is the process's standard input.
func (e *Exec) Stdin() io.Writer { return e.conn.Conn }

// CloseStdin signals end of input.
func (e *Exec) CloseStdin() error { return e.conn.CloseWrite() }

// CopyOutput copies the process's output until it ends: with a Tty all of
// it to stdout, otherwise demultiplexed into stdout and stderr.
func (e *Exec) CopyOutput(tty bool, stdout, stderr io.Writer) error {
	var err error
	if tty {
		_, err = io.Copy(stdout, e.conn.Reader)
	} else {
		_, err = stdcopy.StdCopy(stdout, stderr, e.conn.Reader)
	}
	if err == io.EOF || isClosed(err) {
		err = nil
	}
	return err
}

func isClosed(err error) bool {
	ne, ok := err.(*net.OpError)
	return ok && ne.Err != nil && ne.Err.Error() == "use of closed network connection"
}

// Resize changes the pseudo-terminal's size (SSH window-change).
func (e *Exec) Resize(ctx context.Context, height, width uint) error {
	return e.d.cli.ContainerExecResize(ctx, e.id, container.ResizeOptions{Height: height, Width: width})
}

// ExitCode waits (polling, as the engine has no wait for execs) until the
// process has ended and returns its exit status. Call it after the output
// has ended.
func (e *Exec) ExitCode(ctx context.Context) (int, error) {
	for {
		ins, err := e.d.cli.ContainerExecInspect(ctx, e.id)
		if err != nil {
			return -1, engineErr("exec inspect", err)
		}
		if !ins.Running {
			return ins.ExitCode, nil
		}
		select {
		case <-ctx.Done():
			return -1, ctx.Err()
		case <-time.After(50 * time.Millisecond):
		}
	}
}

// Close drops the connection to the process. A process without a Tty that
// ignores the closed input keeps running until the container stops: the
// engine has no way to signal an exec.
func (e *Exec) Close() { e.conn.Close() }
