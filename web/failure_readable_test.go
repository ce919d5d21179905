package web_test

import (
	"context"
	"strings"
	"testing"

	"workbench/internal/testsupport/testimages"
	"workbench/models"
)

// A launch whose image cannot be downloaded fails with one sentence that
// names the registry and what to do (a user: what to ask an admin for; an
// admin: what to do); the engine's error chain is under "details" on the
// page and in the API.
func TestPullFailureIsOneSentence(t *testing.T) {
	p, _ := enginePortal(t)
	ctx := context.Background()
	img := &models.Image{Name: "unreachable", Image: "127.0.0.1:1/workbench-test/nowhere:1", StartCommand: testimages.FakeJupyterStartCommand, Enabled: true}
	if err := p.srv.Store.CreateImage(ctx, img); err != nil {
		t.Fatal(err)
	}
	alice := tokenFor(t, p, "alice", "user")
	code, wb := p.api("POST", "/api/v1/workbenches", alice, `{"name":"far","image":"unreachable","flavor":"CPU small"}`)
	if code != 202 {
		t.Fatalf("launch: %d %v", code, wb)
	}
	aliceID := wb["id"].(string)
	wb = waitState(t, p, alice, aliceID, "failed")
	want := "This server cannot download from 127.0.0.1:1 — ask an admin to pre-pull the image or configure a registry mirror."
	if wb["reason"] != want {
		t.Fatalf("reason %q\nwant   %q", wb["reason"], want)
	}
	details, _ := wb["reason_details"].(string)
	if !strings.Contains(details, "127.0.0.1:1") || !strings.Contains(details, "connection refused") {
		t.Errorf("reason_details %q: want the engine's error", details)
	}
	c := p.client()
	p.login(c, "alice", "alice-password")
	_, page := p.get(c, "/workbenches/"+wb["id"].(string))
	doc := parseHTML(t, page)
	if got := strings.TrimSpace(doc.Find(`[data-testid=wb-reason]`).Text()); got != want {
		t.Errorf("page reason %q", got)
	}
	if d := doc.Find(`details[data-testid=wb-reason-details]`); d.Length() != 1 || !strings.Contains(d.Text(), "connection refused") {
		t.Errorf("page has no <details> with the raw error: %q", d.Text())
	}

	// An admin's own launch is told what to do, not to ask an admin.
	root := tokenFor(t, p, "root", "admin")
	code, wb = p.api("POST", "/api/v1/workbenches", root, `{"name":"far","image":"unreachable","flavor":"CPU small"}`)
	if code != 202 {
		t.Fatalf("admin's launch: %d %v", code, wb)
	}
	wb = waitState(t, p, root, wb["id"].(string), "failed")
	want = "This server cannot download from 127.0.0.1:1 — set a mirror for it under Admin → Registries, or load the image from an archive (workbench image load)."
	if wb["reason"] != want {
		t.Errorf("admin's reason %q\nwant   %q", wb["reason"], want)
	}

	// The admin's list of everyone's workbenches says why alice's failed
	// (her page is closed to admins), worded for the admin who reads it.
	ac := p.client()
	p.login(ac, "root", "root-password")
	_, page = p.get(ac, "/admin/workbenches?state=failed")
	row := parseHTML(t, page).Find(`tr[data-testid=workbench-row][data-id="` + aliceID + `"]`)
	if got := strings.TrimSpace(row.Find(`[data-testid=wb-failed-reason]`).Text()); got != want {
		t.Errorf("admin list: alice's failed row says %q\nwant %q", got, want)
	}
	p.srv.Manager.Wait()
}

// The last lines of a container that exited are kept after the container
// is gone and shown on the workbench page.
func TestExitLogsAreKept(t *testing.T) {
	p, cli := enginePortal(t)
	ctx := context.Background()
	fake, _ := p.srv.Store.ImageByNameOrID(ctx, "fake")
	img := &models.Image{Name: "crashing", Image: fake.Image, RunAsUser: "1000", HomePath: testimages.FakeJupyterHome, Enabled: true,
		StartCommand: "/fakejupyter --no-such-flag --port={port} --base-url={base_url} --token={token}"}
	if err := p.srv.Store.CreateImage(ctx, img); err != nil {
		t.Fatal(err)
	}
	alice := tokenFor(t, p, "alice", "user")
	code, wb := p.api("POST", "/api/v1/workbenches", alice, `{"name":"crash","image":"crashing","flavor":"CPU small"}`)
	if code != 202 {
		t.Fatalf("launch: %d %v", code, wb)
	}
	id := wb["id"].(string)
	waitState(t, p, alice, id, "failed")
	p.srv.Manager.Wait()
	// The failed launch removed its container: only the kept lines remain.
	if rec, _ := p.srv.Store.WorkbenchByID(ctx, id); rec.ContainerID != "" {
		if _, err := cli.ContainerInspect(ctx, rec.ContainerID); err == nil {
			t.Fatalf("the failed container %s is still there; the test needs it gone", rec.ContainerID)
		}
	}
	c := p.client()
	p.login(c, "alice", "alice-password")
	_, page := p.get(c, "/workbenches/"+id)
	doc := parseHTML(t, page)
	logs := doc.Find(`[data-testid=wb-logs]`)
	if kept, _ := logs.Attr("data-kept"); kept != "true" || !strings.Contains(logs.Text(), "flag provided but not defined: -no-such-flag") {
		t.Fatalf("workbench page logs (kept=%q): %q", kept, logs.Text())
	}
	if doc.Find(`[data-testid=exit-logs-note]`).Length() != 1 {
		t.Error("the page does not say these are the lines kept at exit")
	}
	if a := doc.Find(`[data-testid=follow-logs]`); a.AttrOr("target", "") == "_blank" || a.AttrOr("data-follow-logs", "") == "" {
		t.Error("follow live opens a new tab instead of tailing in the page")
	}
	// A script reads the same kept lines (it got an empty body).
	if code, body := p.apiBytes("GET", "/api/v1/workbenches/"+id+"/logs?tail=20", alice, ""); code != 200 || !strings.Contains(string(body), "flag provided but not defined: -no-such-flag") {
		t.Errorf("logs API of the failed launch: %d %q", code, body)
	}
}

// A running workbench whose container is ended from outside keeps the
// container's last lines (reconciliation stores them as it closes it).
func TestExitLogsKeptWhenContainerDies(t *testing.T) {
	p, cli := enginePortal(t)
	ctx := context.Background()
	alice := tokenFor(t, p, "alice", "user")
	code, wb := p.api("POST", "/api/v1/workbenches", alice, `{"name":"dies","image":"fake","flavor":"CPU small"}`)
	if code != 202 {
		t.Fatalf("launch: %d %v", code, wb)
	}
	id := wb["id"].(string)
	waitState(t, p, alice, id, "running")
	rec, _ := p.srv.Store.WorkbenchByID(ctx, id)
	if err := cli.ContainerKill(ctx, rec.ContainerID, "TERM"); err != nil {
		t.Fatal(err)
	}
	// Reconciliation is what notices; run it as the server would.
	cullRunManager(t, p)
	wb = waitState(t, p, alice, id, "stopped")
	if !strings.Contains(wb["reason"].(string), "stopped outside the portal") { // a TERM from outside, not its own exit
		t.Errorf("reason %q", wb["reason"])
	}
	rec, _ = p.srv.Store.WorkbenchByID(ctx, id)
	if !strings.Contains(rec.ExitLogs, "Fake JupyterLab listening") || !strings.Contains(rec.ExitLogs, "shutting down") {
		t.Fatalf("kept exit logs: %q", rec.ExitLogs)
	}
	p.srv.Manager.Wait()
}
