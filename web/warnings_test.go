package web_test

import (
	"context"
	"net/http"
	"net/url"
	"regexp"
	"strings"
	"testing"
	"time"

	"workbench/models"
)

// The budget banner appears at 80% of the monthly budget on the workbench
// list, the workbench page and the launch form, not only on /usage; below
// 80% it does not.
func TestBudgetBannerWhereUsersWork(t *testing.T) {
	p := newPortal(t)
	ctx := context.Background()
	tokenFor(t, p, "ada", "user")
	tokenFor(t, p, "bob", "user")
	ada, _ := p.srv.Store.UserByUsername(ctx, "ada")
	bob, _ := p.srv.Store.UserByUsername(ctx, "bob")
	month := models.MonthStart(time.Now())
	mpSeedLines(t, p, ada.ID, "", month, 3_300_000) // 82.5% of 4.00
	mpSeedLines(t, p, bob.ID, "", month, 3_100_000) // 77.5% of 4.00
	_, adminTok := mpAdmin(t, p)
	for _, u := range []string{"ada", "bob"} {
		if st, body := p.api("PUT", "/api/v1/admin/quotas/users/"+u, adminTok, `{"budget_per_month_micros": 4000000}`); st != 200 {
			t.Fatalf("set %s's quota: %d %v", u, st, body)
		}
	}
	// A stopped workbench of ada's for its page (no engine needed).
	wb := &models.Workbench{Name: "w1", OwnerID: ada.ID, ImageID: 1, FlavorID: 1}
	if err := p.srv.Store.CreateWorkbench(ctx, wb, models.GPUNeed{}, nil); err != nil {
		t.Fatal(err)
	}
	if err := p.srv.Store.SetWorkbenchState(ctx, wb.ID, models.StateStopped, 0, "", nil); err != nil {
		t.Fatal(err)
	}

	ac, bc := p.client(), p.client()
	p.login(ac, "ada", "ada-password")
	p.login(bc, "bob", "bob-password")
	for _, path := range []string{"/", "/workbenches/" + wb.ID, "/workbenches/new"} {
		res, body := p.get(ac, path)
		if res.StatusCode != 200 {
			t.Fatalf("GET %s: %d", path, res.StatusCode)
		}
		banner := mpDoc(t, body).Find(`[data-testid=budget-banner]`)
		if banner.Length() != 1 {
			t.Errorf("%s: no budget banner at 82%%", path)
			continue
		}
		if txt := banner.Text(); !strings.Contains(txt, "3.30") || !strings.Contains(txt, "4.00") || !strings.Contains(txt, "82%") {
			t.Errorf("%s: banner %q does not say 3.30 of 4.00 (82%%)", path, strings.TrimSpace(txt))
		}
		if _, body := p.get(bc, path); strings.Contains(body, `data-testid="budget-banner"`) && path != "/workbenches/"+wb.ID {
			t.Errorf("%s: banner shown to bob at 77%%", path)
		}
	}
}

// "+1 h": the owner pushes the flavor's maximum-runtime stop back by an
// hour while the quota's ceiling allows, and is refused past it; the page
// shows both deadlines; nobody else can extend; a cross-site form cannot.
func TestExtendRuntime(t *testing.T) {
	p, _ := enginePortal(t)
	ctx := context.Background()
	alice := tokenFor(t, p, "alice", "user")
	bob := tokenFor(t, p, "bob", "user")
	_, adminTok := mpAdmin(t, p)
	fl, err := p.srv.Store.FlavorByNameOrID(ctx, "CPU small")
	if err != nil {
		t.Fatal(err)
	}
	if st, body := p.api("PUT", "/api/v1/flavors/"+itoa(fl.ID), adminTok,
		`{"name":"CPU small","cpu_cores":1,"memory_gib":2,"max_runtime_seconds":7200,"enabled":true}`); st != 200 {
		t.Fatalf("flavor max runtime: %d %v", st, body)
	}
	if st, body := p.api("PUT", "/api/v1/admin/quotas/default", adminTok, `{"max_runtime_hours": 3}`); st != 200 {
		t.Fatalf("quota: %d %v", st, body)
	}
	id := cullLaunch(t, p, alice, "ext", "CPU small", 3600)
	wb := waitState(t, p, alice, id, "running")
	started, err := time.Parse(time.RFC3339, wb["started_at"].(string))
	if err != nil {
		t.Fatal(err)
	}

	ac := p.client()
	p.login(ac, "alice", "alice-password")
	_, body := p.get(ac, "/workbenches/"+id)
	doc := mpDoc(t, body)
	idle := strings.TrimSpace(doc.Find(`[data-testid=wb-deadlines] [data-testid=wb-idle-deadline]`).Text())
	if want := deadlineText("stops at ", started.Add(time.Hour)); !strings.HasPrefix(idle, "idle ") || !want.MatchString(idle) || !strings.Contains(idle, "unless used") {
		t.Errorf("idle deadline %q, want idle … %s unless used", idle, want)
	}
	rt := strings.TrimSpace(doc.Find(`[data-testid=wb-deadlines] [data-testid=wb-runtime-deadline]`).Text())
	if want := deadlineText("ends at ", started.Add(2*time.Hour)); !want.MatchString(rt) {
		t.Errorf("runtime deadline %q, want %s", rt, want)
	}
	if doc.Find(`form[action="/workbenches/`+id+`/extend"] [data-testid=extend]`).Length() != 1 {
		t.Fatal("no +1 h button on the workbench page")
	}
	_, list := p.get(ac, "/")
	if mpDoc(t, list).Find(`[data-testid=workbench-row] [data-testid=wb-runtime-deadline]`).Length() != 1 {
		t.Error("the list shows no runtime deadline")
	}

	// Someone else's workbench is not found; a cross-site form is refused.
	if st, _ := p.api("POST", "/api/v1/workbenches/"+id+"/extend", bob, ""); st != http.StatusNotFound {
		t.Errorf("bob extends alice's workbench: %d, want 404", st)
	}
	req, _ := http.NewRequest(http.MethodPost, p.ts.URL+"/workbenches/"+id+"/extend", strings.NewReader(""))
	req.Header.Set("Content-Type", "application/x-www-form-urlencoded")
	req.Header.Set("Origin", "https://evil.example")
	req.Header.Set("Sec-Fetch-Site", "cross-site")
	if res, err := ac.Do(req); err != nil || res.StatusCode != http.StatusForbidden {
		t.Errorf("cross-site extend: %v %v, want 403", res.StatusCode, err)
	}

	// The form (no JavaScript): +1 h, 2 h → 3 h, the quota's ceiling.
	st, loc, _ := mpPost(t, p, ac, "/workbenches/"+id+"/extend", url.Values{})
	if st != http.StatusSeeOther || loc != "/workbenches/"+id {
		t.Fatalf("extend form: %d → %q", st, loc)
	}
	_, body = p.get(ac, "/workbenches/"+id)
	doc = mpDoc(t, body)
	rt = strings.TrimSpace(doc.Find(`[data-testid=wb-runtime-deadline]`).First().Text())
	if want := deadlineText("ends at ", started.Add(3*time.Hour)); !want.MatchString(rt) {
		t.Errorf("after +1 h the runtime deadline reads %q, want %s", rt, want)
	}
	if doc.Find(`[data-testid=extend]`).Length() != 0 || doc.Find(`[data-testid=extend-refusal]`).Length() != 1 {
		t.Error("at the quota's ceiling the page still offers +1 h or does not say why not")
	}
	// Past the quota: refused, in the API and the form, and nothing changes.
	code, out := p.api("POST", "/api/v1/workbenches/"+id+"/extend", alice, "")
	if code != http.StatusConflict || errCode(out) != "extend_refused" {
		t.Fatalf("extend past the quota: %d %v, want 409 extend_refused", code, out)
	}
	if st, _, body := mpPost(t, p, ac, "/workbenches/"+id+"/extend", url.Values{}); st != http.StatusConflict || !strings.Contains(body, "at most 3 h") {
		t.Errorf("form extend past the quota: %d", st)
	}
	got, err := p.srv.Store.WorkbenchByID(ctx, id)
	if err != nil || got.RuntimeExtensionS != 3600 {
		t.Fatalf("extension %d (err %v), want 3600", got.RuntimeExtensionS, err)
	}
}

// Through the API, a flavor limit without a quota ceiling extends.
func TestExtendRuntimeAPI(t *testing.T) {
	p, _ := enginePortal(t)
	ctx := context.Background()
	alice := tokenFor(t, p, "alice", "user")
	_, adminTok := mpAdmin(t, p)
	fl, _ := p.srv.Store.FlavorByNameOrID(ctx, "CPU small")
	p.api("PUT", "/api/v1/flavors/"+itoa(fl.ID), adminTok, `{"name":"CPU small","cpu_cores":1,"memory_gib":2,"max_runtime_seconds":3600,"enabled":true}`)
	id := cullLaunch(t, p, alice, "ext", "CPU small", 3600)
	waitState(t, p, alice, id, "running")
	code, out := p.api("POST", "/api/v1/workbenches/"+id+"/extend", alice, "")
	if code != 200 || out["runtime_limit_seconds"] != float64(7200) || out["can_extend"] != true {
		t.Fatalf("extend: %d %v, want 200 with a 7200 s limit, extendable again", code, out)
	}
	// Extensions belong to one run: a new start begins at the flavor's limit.
	if code, out := p.api("POST", "/api/v1/workbenches/"+id+"/stop", alice, ""); code != 200 {
		t.Fatalf("stop: %d %v", code, out)
	}
	waitState(t, p, alice, id, "stopped")
	if code, out := p.api("POST", "/api/v1/workbenches/"+id+"/start", alice, ""); code >= 300 {
		t.Fatalf("start: %d %v", code, out)
	}
	waitState(t, p, alice, id, "running")
	if got, err := p.srv.Store.WorkbenchByID(ctx, id); err != nil || got.RuntimeExtensionS != 0 {
		t.Fatalf("after a new start the extension is %d (%v), want 0", got.RuntimeExtensionS, err)
	}
}

// deadlineText matches a deadline as the page prints it: the time of day,
// preceded by the date when it falls on another day than the page was
// rendered (a workbench started at 22:17 ends tomorrow). The test cannot
// know which side of midnight the render fell on, so both forms pass.
func deadlineText(before string, at time.Time) *regexp.Regexp {
	at = at.UTC()
	return regexp.MustCompile(regexp.QuoteMeta(before) + `(` + regexp.QuoteMeta(at.Format("2006-01-02")) + ` )?` + regexp.QuoteMeta(at.Format("15:04 UTC")))
}
