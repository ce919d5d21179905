package web_test

import (
	"context"
	"fmt"
	"io"
	"log/slog"
	"net/http"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/docker/docker/client"

	"workbench/models"
)

// `workbench user delete` (the real binary) does the database's part at
// once and leaves the engine's to the portal (the real binary too, on the
// real engine), which holds the engine's lease. Deleted while the portal
// runs, bob's running workbench and home volume go at its next
// reconciliation, without a restart. Deleted while the portal is stopped,
// carol's container, which ran on through the stop, is still there (the
// command did not touch the engine) and goes, with her home volume, when
// the portal starts again.
func TestCLIUserDeleteIsFinishedByThePortal(t *testing.T) {
	cli := dockerClient(t)
	ctx := context.Background()
	fakeRef := fakeJupyterImage(t)
	pp := newPortalProc(t)
	store, err := models.Open(ctx, pp.dataDir, slog.New(slog.NewTextHandler(io.Discard, nil)))
	if err != nil {
		t.Fatal(err)
	}
	install, err := store.InstallID(ctx)
	store.Close()
	if err != nil {
		t.Fatal(err)
	}
	cleanupInstall(t, cli, install)
	pp.start()
	p := pp.http
	admin := pp.cli("", "token", "create", "admin")
	if code, body := p.api("POST", "/api/v1/images", admin, catalogJSON(fakeCatalogImage("fake", fakeRef))); code != http.StatusCreated {
		t.Fatalf("add catalog image: %d %v", code, body)
	}

	// user's running workbench: its container's id and the home volume.
	running := func(user string) (string, string) {
		t.Helper()
		pp.cli(user+"-password-1\n", "user", "add", user, "--password-stdin")
		token := pp.cli("", "token", "create", user)
		code, wb := p.api("POST", "/api/v1/workbenches", token, `{"name":"notes","image":"fake","flavor":"CPU small"}`)
		if code != http.StatusAccepted {
			t.Fatalf("%s's launch: %d %v", user, code, wb)
		}
		id := wb["id"].(string)
		waitState(t, p, token, id, "running")
		c, ok := containerOf(t, cli, install, id)
		if !ok || !c.running {
			t.Fatalf("%s's workbench runs without a container", user)
		}
		vol := "wb-home-" + install + "-" + user
		if _, err := cli.VolumeInspect(ctx, vol); err != nil {
			t.Fatalf("%s's home volume: %v", user, err)
		}
		return c.id, vol
	}
	deleted := func(user string) {
		t.Helper()
		out := pp.cli("", "user", "delete", user, "--confirm", user)
		if !strings.Contains(out, "deleted the account "+user) || !strings.Contains(out, "its workbench, with its container, and its home volume are removed by the portal") {
			t.Fatalf("user delete %s said %q", user, out)
		}
	}
	erased := func(user, container, vol string) {
		t.Helper()
		// The portal reconciles every second (newPortalProc); the bound
		// only ends a hung test, far past what a busy machine needs.
		deadline := time.Now().Add(5 * time.Minute)
		for {
			_, cErr := cli.ContainerInspect(ctx, container)
			_, vErr := cli.VolumeInspect(ctx, vol)
			if client.IsErrNotFound(cErr) && client.IsErrNotFound(vErr) {
				return
			}
			if time.Now().After(deadline) {
				t.Fatalf("5 minutes after %s's deletion: container %v, home volume %v; want both gone", user, cErr, vErr)
			}
			time.Sleep(100 * time.Millisecond)
		}
	}

	bobC, bobVol := running("bob")
	deleted("bob")
	erased("bob", bobC, bobVol)

	carolC, carolVol := running("carol")
	if err := pp.signal(syscall.SIGTERM, 30*time.Second); err != nil {
		t.Fatalf("the portal's stop: %v", err)
	}
	deleted("carol")
	if c, err := cli.ContainerInspect(ctx, carolC); err != nil || !c.State.Running {
		t.Fatalf("carol's container after her deletion with no portal: %v; want it left running for the portal", err)
	}
	pp.start()
	erased("carol", carolC, carolVol)

	store, err = models.Open(ctx, pp.dataDir, slog.New(slog.NewTextHandler(io.Discard, nil)))
	if err != nil {
		t.Fatal(err)
	}
	defer store.Close()
	if pending, err := store.PendingUserErasures(ctx); err != nil || len(pending) != 0 {
		t.Errorf("erasures still pending: %v %v", pending, err)
	}
	users, err := store.ListUsers(ctx)
	if err != nil {
		t.Fatal(err)
	}
	var tombs []string
	for _, u := range users {
		if u.Deleted() {
			tombs = append(tombs, fmt.Sprintf("%s erased %v", u.Username, u.ErasedAt != nil))
		}
	}
	if len(tombs) != 2 || strings.Contains(strings.Join(tombs, ";"), "false") {
		t.Errorf("tombstones %v, want two, both erased", tombs)
	}
}
