//go:build linux

package web_test

import (
	"bytes"
	"context"
	"io"
	"strings"
	"testing"
	"time"

	"workbench/web"
)

// TestSSHTransferIsActivity: a file transfer over the portal's SSH gate
// (here `cat` both ways, as scp and `tar | ssh` move data) keeps its
// workbench from being culled as idle while data moves, in either
// direction, and once it has ended the idle timeout runs again. Before,
// SSH traffic counted for nothing: a workbench with a 2 s idle timeout was
// stopped in the middle of a 3.5 s transfer (a 1 GiB scp with the portal's
// one-hour default, the same).
func TestSSHTransferIsActivity(t *testing.T) {
	p, _ := realJupyterPortal(t, cullTimers, func(c *web.Config) { c.ActivityEvery = 100 * time.Millisecond })
	cullRunManager(t, p)
	port := p.serveSSH()
	alice := tokenFor(t, p, "alice", "user")
	a, _ := addVerifiedKey(t, p, port, alice, "laptop")

	const chunk, chunks = 128 << 10, 14 // 1.75 MiB over 3.5 s: longer than the 2 s idle timeout
	launch := func(name string) string {
		code, wb := p.api("POST", "/api/v1/workbenches", alice, `{"name":"`+name+`","image":"jupyter","flavor":"CPU small","idle_timeout_seconds":2}`)
		if code != 202 {
			t.Fatalf("launch: %d %v", code, wb)
		}
		id := wb["id"].(string)
		waitState(t, p, alice, id, "running")
		return id
	}
	stillRunning := func(id, what string) {
		t.Helper()
		if code, wb := p.api("GET", "/api/v1/workbenches/"+id, alice, ""); code != 200 || wb["state"] != "running" {
			t.Fatalf("after %s: state %v, reason %v", what, wb["state"], wb["reason"])
		}
	}

	t.Run("upload", func(t *testing.T) {
		id := launch("upload")
		ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
		defer cancel()
		c := a.cmd(ctx, id, "wc -c")
		in, err := c.StdinPipe()
		if err != nil {
			t.Fatal(err)
		}
		var out, errb bytes.Buffer
		c.Stdout, c.Stderr = &out, &errb
		if err := c.Start(); err != nil {
			t.Fatal(err)
		}
		// A slow client: a chunk every 250 ms.
		for i := range chunks {
			if _, err := in.Write(make([]byte, chunk)); err != nil {
				t.Fatalf("chunk %d of the upload: %v (%s)", i, err, errb.String())
			}
			time.Sleep(250 * time.Millisecond)
		}
		in.Close()
		if err := c.Wait(); err != nil || strings.TrimSpace(out.String()) != itoa(chunk*chunks) {
			t.Fatalf("upload over ssh: %v, %q bytes arrived (%s)", err, out.String(), errb.String())
		}
		stillRunning(id, "an upload of 3.5 s")
		last := time.Now()
		wb := cullWaitStopped(t, p, alice, id, 15*time.Second, nil)
		if quiet := time.Since(last); quiet < 1500*time.Millisecond {
			t.Errorf("culled %s after the transfer ended, before the 2 s idle timeout", quiet)
		}
		if r, _ := wb["reason"].(string); !strings.Contains(r, "idle") {
			t.Errorf("reason %q", r)
		}
	})

	t.Run("download", func(t *testing.T) {
		id := launch("download")
		ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
		defer cancel()
		// The workbench sends a chunk every 250 ms.
		c := a.cmd(ctx, id, "i=0; while [ $i -lt "+itoa(chunks)+" ]; do head -c "+itoa(chunk)+" /dev/zero; sleep 0.25; i=$((i+1)); done")
		var errb bytes.Buffer
		c.Stderr = &errb
		outp, err := c.StdoutPipe()
		if err != nil {
			t.Fatal(err)
		}
		if err := c.Start(); err != nil {
			t.Fatal(err)
		}
		n, _ := io.Copy(io.Discard, outp)
		if err := c.Wait(); err != nil || n != chunk*chunks {
			t.Fatalf("download over ssh: %v, %d of %d bytes (%s)", err, n, chunk*chunks, errb.String())
		}
		stillRunning(id, "a download of 3.5 s")
	})
}
