package web_test

import (
	"bytes"
	"context"
	"net/http"
	"os/exec"
	"strings"
	"testing"
	"time"

	"workbench/internal/testsupport/freeport"
	"workbench/models"
)

// The lease refusal suggested --new-identity, and an operator ran it on
// the data directory of the running portal itself: it rewrote the live
// install id, the running workbenches were closed as "the original's",
// the portal stopped their containers and told their owners their homes
// were removed. On the database file a live portal holds the lease for
// (same device and inode) it is not a copy: the start refuses, says why
// and what to do, and rewrites nothing; the live workbench runs on.
func TestNewIdentityRefusedOnTheDataOfARunningPortal(t *testing.T) {
	cli := dockerClient(t)
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Minute)
	defer cancel()
	fakeRef := fakeJupyterImage(t)
	live := newPortalProc(t)
	installID := func() string {
		t.Helper()
		s, err := models.Open(ctx, live.dataDir, nil)
		if err != nil {
			t.Fatal(err)
		}
		defer s.Close()
		id, err := s.InstallID(ctx)
		if err != nil {
			t.Fatal(err)
		}
		if at, err := s.NewIdentityAt(ctx); err != nil || !at.IsZero() {
			t.Fatalf("the data was given a new identity at %v (%v)", at, err)
		}
		return id
	}
	original := installID()
	cleanupInstall(t, cli, original)
	live.start()
	live.cli("alice-password-1\n", "user", "add", "alice", "--password-stdin")
	alice := live.cli("", "token", "create", "alice")
	admin := live.cli("", "token", "create", "admin")
	if code, body := live.http.api("POST", "/api/v1/images", admin, catalogJSON(fakeCatalogImage("fake", fakeRef))); code != http.StatusCreated {
		t.Fatalf("add image: %d %v", code, body)
	}
	id := moneyLaunch(t, live.http, alice, "precious")
	waitState(t, live.http, alice, id, "running")
	before, ok := containerOf(t, cli, original, id)
	if !ok || !before.running {
		t.Fatal("no running container")
	}

	// The same data directory, another address (a port in use would stop
	// it before the identity is looked at).
	addr, err := freeport.Addr()
	if err != nil {
		t.Fatal(err)
	}
	cmd := exec.CommandContext(ctx, live.bin, "serve", "--new-identity")
	cmd.Env = append(append([]string{}, live.env...), "WORKBENCH_ADDR="+addr)
	var out bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &out
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	done := make(chan error, 1)
	go func() { done <- cmd.Wait() }()
	t.Cleanup(func() { _ = cmd.Process.Kill() })
	// It exits with the refusal; the old code rewrote the id and served.
	tick := time.NewTicker(200 * time.Millisecond)
	defer tick.Stop()
	deadline := time.After(2 * time.Minute)
wait:
	for {
		select {
		case err = <-done:
			break wait
		case <-tick.C:
			if got := installID(); got != original {
				t.Fatalf("serve --new-identity on the running portal's data rewrote install id %s to %s:\n%s", original, got, out.String())
			}
		case <-deadline:
			t.Fatalf("serve --new-identity neither refused nor changed anything in 2 min:\n%s", out.String())
		}
	}
	msg := out.String()
	if err == nil || !strings.Contains(msg, "--new-identity: refused, nothing was changed: a running portal") ||
		!strings.Contains(msg, "uses this very database") || !strings.Contains(msg, "as install "+original+"; this is not a copy") ||
		!strings.Contains(msg, "--new-identity is only for a COPY in another data directory") {
		t.Fatalf("serve --new-identity on the running portal's data: %v\n%s", err, msg)
	}
	t.Logf("refused: %s", lastLine(msg))
	if got := installID(); got != original {
		t.Fatalf("install id %s became %s", original, got)
	}
	after, ok := containerOf(t, cli, original, id)
	if !ok || !after.running || after.id != before.id || after.startedAt != before.startedAt {
		t.Fatalf("the live portal's container was touched: before %+v, after %+v (found %v)", before, after, ok)
	}
	if _, wb := live.http.api("GET", "/api/v1/workbenches/"+id, alice, ""); wb["state"] != "running" {
		t.Fatalf("the live portal's workbench is %v", wb["state"])
	}
}
