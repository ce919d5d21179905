package web_test

import (
	"archive/tar"
	"context"
	"fmt"
	"io"
	"net/http"
	"strings"
	"testing"
	"time"

	"workbench/internal/testsupport/testimages"
	"workbench/web"
)

// On the real engine: eight preemptible runs fill the pool; an interactive
// launch that waits makes the newest yield: the notice appears in its home
// at once, it keeps running through the grace, then it is "preempted" and,
// with auto-resume, queued again; it runs again when the interactive one
// stops. The timer that ends the grace is the portal's own.
func TestPreemptionOnTheEngine(t *testing.T) {
	p, cli := enginePortal(t, func(c *web.Config) {
		c.Workbenches.PreemptGrace = 5 * time.Second
		c.Workbenches.DrainEvery = 200 * time.Millisecond
	})
	cullRunManager(t, p) // the manager's loops, whose queue timer ends the grace
	spot := tokenFor(t, p, "spot", "user")
	eve := tokenFor(t, p, "eve", "user")
	var ids []string
	for i := range 8 {
		code, wb := p.api("POST", "/api/v1/workbenches", spot, fmt.Sprintf(`{"name":"spot-%d","image":"fake","flavor":"1x H100 80GB HBM3","preemptible":true,"auto_resume":true}`, i))
		if code != http.StatusAccepted || wb["preemptible"] != true {
			t.Fatalf("spot %d: %d %v", i, code, wb)
		}
		waitState(t, p, spot, wb["id"].(string), "running")
		ids = append(ids, wb["id"].(string))
	}
	newest := ids[7]
	code, want := p.api("POST", "/api/v1/workbenches", eve, `{"name":"now","image":"fake","flavor":"1x H100 80GB HBM3","queue":true}`)
	if code != http.StatusAccepted || want["state"] != "queued" || want["priority"] != "interactive" {
		t.Fatalf("interactive launch: %d %v", code, want)
	}
	_, victim := p.api("GET", "/api/v1/workbenches/"+newest, spot, "")
	at, _ := victim["preempt_at"].(string)
	// (That it runs on through the grace is asserted with a test clock in
	// orchestrator's TestMemPreemptionNoticeGraceAndAutoResume; a wall-clock
	// grace cannot be raced on a busy machine.)
	if at == "" || !strings.Contains(victim["reason"].(string), "higher-priority launch") {
		t.Fatalf("newest spot run after the interactive launch: %v", victim)
	}
	// What it yields to, in the notice's words, beside when (it was only
	// in the free-text reason during the grace).
	if got := victim["preempt_for"]; got != "priority interactive, 1 × H100 80GB HBM3 needed, 0 free" {
		t.Errorf("preempt_for during the grace: %v", got)
	}
	if _, other := p.api("GET", "/api/v1/workbenches/"+ids[0], spot, ""); other["preempt_for"] != nil {
		t.Errorf("a run that need not yield has preempt_for %v", other["preempt_for"])
	}
	// The waiting launch expects its GPU when the grace ends (read while it
	// still waits: a machine slow enough to let the 5 s grace pass first is
	// left to the in-memory test's clock).
	if _, w := p.api("GET", "/api/v1/workbenches/"+want["id"].(string), eve, ""); w["state"] == "queued" && w["estimated_start"] != at &&
		time.Now().Before(mustTime(t, at)) {
		t.Fatalf("waiting launch: estimated start %v, want the victim's stop time %s", w["estimated_start"], at)
	}
	// Its owner sees it in the list of workbenches, not only on its page.
	c := p.client()
	p.login(c, "spot", "spot-password")
	_, list := p.get(c, "/")
	row := mpDoc(t, list).Find(`[data-testid=workbench-row][data-id="` + newest + `"]`)
	// Marked preemptible in the list and on its page, not only by its rate.
	if row.Find(`[data-testid=row-preemptible]`).Length() != 1 {
		t.Errorf("the list does not mark the preemptible run: %q", row.Text())
	}
	if _, pg := p.get(c, "/workbenches/"+ids[0]); mpDoc(t, pg).Find(`[data-testid=wb-preemptible]`).Length() != 1 {
		t.Error("the page of a preemptible run does not say it is preemptible")
	}
	if note := row.Find(`[data-testid=row-preempt-at]`).Text(); !strings.Contains(note, "preempted: stops at") {
		if _, now := p.api("GET", "/api/v1/workbenches/"+newest, spot, ""); now["preempt_at"] != nil { // not yet stopped
			t.Fatalf("list row of the yielding run: %q", row.Text())
		}
	}
	// The notice, in the home, as the container sees it: at the path its
	// $WORKBENCH_PREEMPT_FILE names. The other runs share the home, and
	// their own notice files stay empty: they need not yield.
	install, err := p.srv.Store.InstallID(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	notice := func(id string) string {
		t.Helper()
		name := "wb-" + install + "-" + id
		ins, err := cli.ContainerInspect(context.Background(), name)
		if err != nil {
			t.Fatal(err)
		}
		file := ""
		for _, e := range ins.Config.Env {
			if v, ok := strings.CutPrefix(e, "WORKBENCH_PREEMPT_FILE="); ok {
				file = v
			}
		}
		if file != testimages.FakeJupyterHome+"/.workbench/preempt-at-"+id {
			t.Fatalf("%s's WORKBENCH_PREEMPT_FILE is %q, want one of its own in the home", id, file)
		}
		rc, _, err := cli.CopyFromContainer(context.Background(), name, file)
		if err != nil {
			t.Fatalf("notice file of %s: %v", id, err)
		}
		defer rc.Close()
		tr := tar.NewReader(rc)
		if _, err := tr.Next(); err != nil {
			t.Fatal(err)
		}
		body, _ := io.ReadAll(tr)
		return strings.TrimSpace(string(body))
	}
	if got := notice(newest); got != at {
		t.Fatalf("notice %q, API preempt_at %q", got, at)
	}
	if got := notice(ids[0]); got != "" {
		t.Fatalf("spot-0, which need not yield, reads the notice %q", got)
	}
	waitState(t, p, eve, want["id"].(string), "running")
	got := waitState(t, p, spot, newest, "queued")
	if len(got["gpus"].([]any)) != 0 {
		t.Fatalf("a preempted run still holds %v", got["gpus"])
	}
	for _, id := range ids[:7] {
		if _, wb := p.api("GET", "/api/v1/workbenches/"+id, spot, ""); wb["state"] != "running" {
			t.Fatalf("%s is %v: only the newest had to yield", id, wb["state"])
		}
	}
	if code, out := p.api("POST", "/api/v1/workbenches/"+want["id"].(string)+"/stop", eve, ""); code != 200 {
		t.Fatalf("stop: %d %v", code, out)
	}
	waitState(t, p, spot, newest, "running")
}

// mustTime parses an RFC 3339 time of the API.
func mustTime(t *testing.T, s string) time.Time {
	t.Helper()
	v, err := time.Parse(time.RFC3339, s)
	if err != nil {
		t.Fatalf("time %q: %v", s, err)
	}
	return v
}
