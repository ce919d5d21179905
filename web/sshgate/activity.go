package sshgate

import (
	"io"
	"sync"
	"time"
)

// What an SSH session does in a workbench is activity for the idle culler,
// as a request through the web proxy is: without it a workbench used only
// over SSH (a shell, scp or sftp of a dataset, VS Code Remote-SSH) was
// stopped for idleness in the middle of the work, and a transfer longer
// than the idle timeout could never finish.
//
// An open connection alone is not activity, as an open browser tab is not:
// data has to move. What the client sends on a terminal counts at once
// (keystrokes are a person at work); anything else (a command's input or
// output, a file transfer, a forwarded port's traffic, both ways) counts
// once transferBytes have moved since the last report, so a trickle (a
// forgotten `tail -f`, a tunnel's heartbeats) does not hold GPUs for ever.
// Reports come at most once per ActivityEvery.

// transferBytes is how much must move before a transfer counts again.
const transferBytes = 64 << 10

// activity reports one session's or tunnel's traffic for its workbench.
type activity struct {
	touch func(at time.Time) // records activity (Manager.Touch)
	now   func() time.Time
	every time.Duration

	mu    sync.Mutex
	last  time.Time // last report
	moved int64     // bytes since the last report
}

func (c *connection) newActivity() *activity {
	s := c.s
	if s.mgr == nil {
		return nil
	}
	return &activity{touch: func(at time.Time) { s.mgr.Touch(c.wbID, at) }, now: s.mgr.Now, every: s.activityEvery(), last: s.mgr.Now()}
}

// add notes n bytes that moved; typed marks what a person typed on a
// terminal.
func (a *activity) add(n int, typed bool) {
	if a == nil || n <= 0 {
		return
	}
	a.mu.Lock()
	a.moved += int64(n)
	if !typed && a.moved < transferBytes {
		a.mu.Unlock()
		return
	}
	now := a.now()
	if now.Sub(a.last) < a.every {
		a.mu.Unlock()
		return
	}
	a.last, a.moved = now, 0
	a.mu.Unlock()
	a.touch(now)
}

// activityReader counts what is read through it.
type activityReader struct {
	r     io.Reader
	a     *activity
	typed bool
}

func (r activityReader) Read(p []byte) (int, error) {
	n, err := r.r.Read(p)
	r.a.add(n, r.typed)
	return n, err
}

// activityWriter counts what is written through it.
type activityWriter struct {
	w io.Writer
	a *activity
}

func (w activityWriter) Write(p []byte) (int, error) {
	n, err := w.w.Write(p)
	w.a.add(n, false)
	return n, err
}
