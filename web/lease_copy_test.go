package web_test

import (
	"context"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"workbench/models"
)

// A copy of a live portal's data (a restored backup) started on the same
// engine must not touch the live portal's containers: the engine is the
// referee (the install lease), so the copy refuses to start and says why;
// with --new-identity it runs as an install of its own. The live
// workbench keeps running, untouched, throughout.
func TestCopyOfLivePortalLeavesItsContainersAlone(t *testing.T) {
	cli := dockerClient(t)
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Minute)
	defer cancel()
	fakeRef := fakeJupyterImage(t)
	live := newPortalProc(t)
	store, err := models.Open(ctx, live.dataDir, nil)
	if err != nil {
		t.Fatal(err)
	}
	installID, err := store.InstallID(ctx)
	store.Close()
	if err != nil {
		t.Fatal(err)
	}
	cleanupInstall(t, cli, installID)
	live.start()
	live.cli("alice-password-1\n", "user", "add", "alice", "--password-stdin")
	alice := live.cli("", "token", "create", "alice")
	admin := live.cli("", "token", "create", "admin")
	img := catalogJSON(fakeCatalogImage("fake", fakeRef))
	if code, body := live.http.api("POST", "/api/v1/images", admin, img); code != http.StatusCreated {
		t.Fatalf("add image: %d %v", code, body)
	}
	// The backup is taken before the launch: to a copy with the same
	// install id, the workbench's container is an orphan it would remove.
	copyPortal := newPortalProc(t)
	backup := filepath.Join(t.TempDir(), "backup.db")
	live.cli("", "backup", backup)
	id := moneyLaunch(t, live.http, alice, "precious")
	waitState(t, live.http, alice, id, "running")
	before, ok := containerOf(t, cli, installID, id)
	if !ok || !before.running {
		t.Fatal("no running container")
	}

	// The copy: a backup of the live data, on another data dir.
	b, err := os.ReadFile(backup)
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(copyPortal.dataDir, models.DBFileName), b, 0o600); err != nil {
		t.Fatal(err)
	}
	// Started as is, it refuses, saying why.
	cmd := exec.CommandContext(ctx, copyPortal.bin, "serve")
	cmd.Env = copyPortal.env
	out, err := cmd.CombinedOutput()
	if err == nil || !strings.Contains(string(out), "another portal process is managing install "+installID) ||
		!strings.Contains(string(out), "If this is a COPY of that install (a restored backup) in another data directory, start the copy with --new-identity") ||
		!strings.Contains(string(out), "never on the data directory the running portal uses") {
		t.Fatalf("the copy started (or did not say why it would not): %v\n%s", err, out)
	}
	t.Logf("the copy refused: %s", lastLine(string(out)))

	// With its own identity it runs, and reconciles only its own install.
	copyPortal.args = []string{"--new-identity"}
	copyPortal.start()
	time.Sleep(2*crashOrphanGrace + 3*time.Second) // several reconciliations and an orphan grace

	after, ok := containerOf(t, cli, installID, id)
	if !ok || !after.running || after.id != before.id || after.startedAt != before.startedAt {
		t.Fatalf("the live portal's container was touched: before %+v, after %+v (found %v)", before, after, ok)
	}
	if _, wb := live.http.api("GET", "/api/v1/workbenches/"+id, alice, ""); wb["state"] != "running" {
		t.Fatalf("the live portal's workbench is %v", wb["state"])
	}
	// The copy has another install id.
	cs, err := models.Open(ctx, copyPortal.dataDir, nil)
	if err != nil {
		t.Fatal(err)
	}
	copyID, _ := cs.InstallID(ctx)
	cs.Close()
	if copyID == installID || copyID == "" {
		t.Fatalf("the copy kept install id %q", copyID)
	}
	cleanupInstall(t, cli, copyID)
}

func lastLine(s string) string {
	lines := strings.Split(strings.TrimSpace(s), "\n")
	return lines[len(lines)-1]
}
