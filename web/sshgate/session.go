package sshgate

import (
	"context"
	"fmt"
	"io"
	"strings"
	"sync"
	"time"

	"golang.org/x/crypto/ssh"

	"workbench/models"
	"workbench/orchestrator"
	"workbench/orchestrator/runtime"
)

// sftpServers are where Debian, Ubuntu, Alpine and RHEL-like images keep
// OpenSSH's sftp-server. The portal runs the image's own: it then reads and
// writes files exactly as the image's user would. An image without one gets
// a clear refusal (install openssh-sftp-server in the image).
var sftpServers = []string{"/usr/lib/openssh/sftp-server", "/usr/lib/sftp-server", "/usr/libexec/openssh/sftp-server", "/usr/libexec/sftp-server"}

// connection is one authenticated SSH connection to one workbench.
type connection struct {
	s      *Server
	conn   *ssh.ServerConn
	wbID   string
	userID int64
	keyID  int64
}

type ptyRequest struct {
	Term                   string
	Columns, Rows, Wpx, Hp uint32
	Modes                  string
}

type windowChange struct{ Columns, Rows, Wpx, Hp uint32 }

// session serves one session channel: at most one shell, command or
// subsystem, after any pty and env requests.
func (c *connection) session(ctx context.Context, nch ssh.NewChannel) {
	wb, err := c.s.store.WorkbenchByID(ctx, c.wbID)
	if err != nil || wb.OwnerID != c.userID {
		nch.Reject(ssh.Prohibited, "this workbench no longer exists")
		return
	}
	ch, reqs, err := nch.Accept()
	if err != nil {
		return
	}
	var (
		mu      sync.Mutex
		pty     *ptyRequest
		env     []string
		ex      *runtime.Exec
		started bool
	)
	for req := range reqs {
		switch req.Type {
		case "pty-req":
			var p ptyRequest
			ok := ssh.Unmarshal(req.Payload, &p) == nil && !started
			if ok {
				mu.Lock()
				pty = &p
				mu.Unlock()
			}
			req.Reply(ok, nil)
		case "env":
			var kv struct{ Name, Value string }
			ok := ssh.Unmarshal(req.Payload, &kv) == nil && (kv.Name == "LANG" || strings.HasPrefix(kv.Name, "LC_"))
			if ok {
				env = append(env, kv.Name+"="+kv.Value)
			}
			req.Reply(ok, nil)
		case "window-change":
			var w windowChange
			if ssh.Unmarshal(req.Payload, &w) == nil {
				mu.Lock()
				if pty != nil {
					pty.Columns, pty.Rows = w.Columns, w.Rows
				}
				running := ex
				mu.Unlock()
				if running != nil {
					running.Resize(ctx, uint(w.Rows), uint(w.Columns))
				}
			}
			req.Reply(false, nil) // window-change never wants a reply
		case "shell", "exec", "subsystem":
			if started {
				req.Reply(false, nil)
				continue
			}
			// The workbench is looked up again: it may have stopped since
			// the connection was made. A stopped one is refused on stderr
			// (OpenSSH hides a rejected channel's reason below LogLevel INFO).
			var target orchestrator.ExecTarget
			var spec runtime.ExecSpec
			var kind, msg string
			if wb, err = c.s.store.WorkbenchByID(ctx, c.wbID); err != nil {
				msg = "this workbench no longer exists"
			} else if target, err = c.s.mgr.ExecTarget(ctx, wb); err != nil {
				msg = notRunningMessage(wb)
			} else {
				mu.Lock()
				spec, kind, msg = c.command(ctx, target, req, pty, env)
				mu.Unlock()
			}
			if msg != "" {
				// Accepted, then refused on stderr with status 1: OpenSSH
				// prints only "request failed" for a refused request, and
				// the reason matters more.
				req.Reply(true, nil)
				fmt.Fprintln(ch.Stderr(), msg)
				sendExit(ch, 1)
				ch.Close()
				continue
			}
			started = true
			req.Reply(true, nil)
			go c.run(ctx, ch, wb, target, spec, kind, func(e *runtime.Exec) { mu.Lock(); ex = e; mu.Unlock() })
		default:
			// x11, auth-agent and signals are not served.
			req.Reply(false, nil)
		}
	}
}

// command turns a shell, exec or subsystem request into the process to
// run; msg says why not when it cannot be served.
func (c *connection) command(ctx context.Context, t orchestrator.ExecTarget, req *ssh.Request, pty *ptyRequest, env []string) (spec runtime.ExecSpec, kind, msg string) {
	spec.Env = append([]string{"HOME=" + t.Home}, env...)
	if pty != nil {
		spec.Tty = true
		spec.Height, spec.Width = uint(pty.Rows), uint(pty.Columns)
		term := pty.Term
		if term == "" {
			term = "xterm"
		}
		spec.Env = append(spec.Env, "TERM="+term)
	}
	shell := ""
	for _, sh := range []string{"/bin/bash", "/bin/sh"} {
		if c.s.mgr.PathExists(ctx, t, sh) {
			shell = sh
			break
		}
	}
	if shell == "" && req.Type != "subsystem" {
		// The engine's own words ("OCI runtime exec failed: … stat
		// /bin/sh: no such file or directory") say nothing to a person.
		return spec, "", "this workbench's image has no shell (/bin/sh), so ssh cannot run a shell or commands in it; port forwarding (ssh -L) still works"
	}
	switch req.Type {
	case "shell":
		spec.Cmd = []string{shell, "-l"}
		return spec, "shell", ""
	case "exec":
		var p struct{ Command string }
		if ssh.Unmarshal(req.Payload, &p) != nil {
			return spec, "", "bad exec request"
		}
		// As sshd does: the user's shell runs the command line.
		spec.Cmd = []string{shell, "-c", p.Command}
		return spec, "exec", ""
	default: // subsystem
		var p struct{ Name string }
		if ssh.Unmarshal(req.Payload, &p) != nil || p.Name != "sftp" {
			return spec, "", fmt.Sprintf("subsystem %q is not served; only sftp is", p.Name)
		}
		for _, path := range sftpServers {
			if c.s.mgr.PathExists(ctx, t, path) {
				spec.Cmd = []string{path}
				spec.Tty = false
				return spec, "sftp", ""
			}
		}
		return spec, "", "sftp is not available: this workbench's image has no sftp-server (install openssh-sftp-server in the image); ssh commands and shells work"
	}
}

// run executes spec in the workbench and relays it over ch until it ends,
// then reports its exit status and closes the channel.
func (c *connection) run(ctx context.Context, ch ssh.Channel, wb *models.Workbench, t orchestrator.ExecTarget, spec runtime.ExecSpec, kind string, started func(*runtime.Exec)) {
	defer ch.Close()
	actor := c.actor(ctx)
	begin := time.Now()
	c.audit(ctx, actor, "ssh.session.start", wb.ID, map[string]any{"kind": kind, "key_id": c.keyID, "remote": c.conn.RemoteAddr().String()})
	code := 255
	defer func() {
		c.audit(context.WithoutCancel(ctx), actor, "ssh.session.end", wb.ID, map[string]any{"kind": kind, "exit_status": code, "seconds": int64(time.Since(begin).Seconds())})
	}()
	ex, err := c.s.mgr.Exec(ctx, t, spec)
	if err != nil {
		c.s.log.Warn("ssh exec", "workbench", wb.ID, "err", err)
		fmt.Fprintf(ch.Stderr(), "could not start the session in workbench %q: %v\n", wb.Name, err)
		sendExit(ch, code)
		return
	}
	defer ex.Close()
	started(ex)
	a := c.newActivity()
	go func() {
		io.Copy(ex.Stdin(), activityReader{r: ch, a: a, typed: spec.Tty})
		// With a terminal, the client's EOF is not passed on (as sshd does
		// not either): the engine would end the whole stream, output and
		// all, before the process has written it.
		if !spec.Tty {
			ex.CloseStdin()
		}
	}()
	if err := ex.CopyOutput(spec.Tty, activityWriter{w: ch, a: a}, activityWriter{w: ch.Stderr(), a: a}); err != nil {
		c.s.log.Debug("ssh output", "workbench", wb.ID, "err", err)
	}
	ictx, cancel := context.WithTimeout(ctx, 30*time.Second)
	defer cancel()
	if n, err := ex.ExitCode(ictx); err == nil {
		code = n
	}
	sendExit(ch, code)
}

func sendExit(ch ssh.Channel, code int) {
	ch.SendRequest("exit-status", false, ssh.Marshal(struct{ Status uint32 }{uint32(code)}))
}

func (c *connection) actor(ctx context.Context) string {
	if u, err := c.s.store.UserByID(ctx, c.userID); err == nil {
		return u.Username
	}
	return fmt.Sprintf("user#%d", c.userID)
}

func (c *connection) audit(ctx context.Context, actor, action, target string, after any) {
	// The connection happened: a row the database refuses (its disk full)
	// is kept and written once it can be (AuditHappened).
	if err := c.s.store.AuditHappened(ctx, models.AuditRecord{Actor: actor, Action: action, Target: target, After: after}); err != nil {
		c.s.log.Error("audit write failed", "action", action, "err", err)
	}
}

// notRunningMessage says why a workbench's shell is refused and what to do,
// by its state: a queued or starting one cannot be "started" (it is on its
// way), a stopped one can.
func notRunningMessage(wb *models.Workbench) string {
	switch wb.State {
	case models.StateQueued:
		return fmt.Sprintf("workbench %q is queued: it starts by itself when its turn comes; connect again once it runs", wb.Name)
	case models.StateRequested, models.StatePulling, models.StateCreating, models.StateStarting:
		return fmt.Sprintf("workbench %q is %s: connect again once it runs", wb.Name, wb.State)
	case models.StateStopping:
		return fmt.Sprintf("workbench %q is stopping; start it again on the portal once it has stopped", wb.Name)
	}
	return fmt.Sprintf("workbench %q is %s; start it on the portal first", wb.Name, wb.State)
}
