package web_test

import (
	"context"
	"net/http"
	"net/url"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/PuerkitoBio/goquery"

	"workbench/handlers"
	"workbench/models"
)

// parsePage reads an HTML page for goquery.
func parsePage(t *testing.T, body string) *goquery.Document {
	t.Helper()
	doc, err := goquery.NewDocumentFromReader(strings.NewReader(body))
	if err != nil {
		t.Fatal(err)
	}
	return doc
}

// queueOrder is the admin queue's workbench ids, top to bottom.
func queueOrder(doc *goquery.Document) []string {
	var ids []string
	doc.Find(`[data-testid=queue-row]`).Each(func(_ int, s *goquery.Selection) { ids = append(ids, s.AttrOr("data-id", "")) })
	return ids
}

// queueTwo drains every GPU of an engine portal and queues two one-GPU
// launches of alice ("first", then "second"); it returns their ids.
func queueTwo(t *testing.T, p *testPortal) (first, second string) {
	t.Helper()
	admin := tokenFor(t, p, "admin", "admin")
	alice := tokenFor(t, p, "alice", "user")
	drainGPUs(t, p, admin, 0)
	var ids []string
	for _, name := range []string{"first", "second"} {
		_, wb := p.api("POST", "/api/v1/workbenches", alice, `{"name":"`+name+`","image":"fake","flavor":"1x H100 80GB HBM3","queue":true}`)
		if wb["state"] != "queued" {
			t.Fatalf("launch %s: %v", name, wb)
		}
		ids = append(ids, wb["id"].(string))
	}
	return ids[0], ids[1]
}

// The admin queue's "move to position" form: each queued row has a number
// and Move; posting 1 for the second request puts it first (audited as
// queue.move); a bad number comes back to the queue with an error flash
// and the order unchanged; a user cannot post it.
func TestAdminQueueMoveForm(t *testing.T) {
	p, _ := enginePortal(t)
	first, second := queueTwo(t, p)
	c := p.client()
	p.loginSudo(c, "admin", adminPassword)
	_, body := p.get(c, "/admin/queue")
	doc := parsePage(t, body)
	if got := queueOrder(doc); len(got) != 2 || got[0] != first || got[1] != second {
		t.Fatalf("queue order before %v", got)
	}
	row := doc.Find(`[data-testid=queue-row][data-id="` + second + `"]`)
	form := row.Find(`form[data-testid=queue-move-form]`)
	if form.AttrOr("action", "") != "/admin/queue/"+second+"/move" || form.AttrOr("method", "") != "post" ||
		form.Find(`input[name=position][data-testid=queue-move-position]`).AttrOr("value", "") != "2" || form.Find(`[data-testid=queue-move]`).Length() != 1 {
		html, _ := goquery.OuterHtml(row)
		t.Fatalf("move form of the second row: %s", html)
	}

	res, _ := p.postFormBody(c, "/admin/queue/"+second+"/move", url.Values{"position": {"first please"}})
	if res.StatusCode != http.StatusSeeOther || res.Header.Get("Location") != "/admin/queue" {
		t.Fatalf("bad position: %d %s", res.StatusCode, res.Header.Get("Location"))
	}
	_, body = p.get(c, "/admin/queue")
	doc = parsePage(t, body)
	if f := doc.Find(`[data-testid=flash]`); f.AttrOr("data-kind", "") != "error" || !strings.Contains(f.Text(), "whole number") {
		t.Fatalf("flash after a bad position: %q %q", f.AttrOr("data-kind", ""), f.Text())
	}
	if got := queueOrder(doc); got[0] != first {
		t.Fatalf("a bad position changed the order: %v", got)
	}

	user := p.client()
	p.login(user, "alice", "alice-password")
	if res := p.postForm(user, "/admin/queue/"+second+"/move", url.Values{"position": {"1"}}); res.StatusCode != http.StatusForbidden && res.StatusCode != http.StatusNotFound {
		t.Fatalf("a user moved: %d", res.StatusCode)
	}

	if res := p.postForm(c, "/admin/queue/"+second+"/move", url.Values{"position": {"1"}}); res.StatusCode != http.StatusSeeOther {
		t.Fatalf("move: %d", res.StatusCode)
	}
	_, body = p.get(c, "/admin/queue")
	doc = parsePage(t, body)
	if got := queueOrder(doc); len(got) != 2 || got[0] != second || got[1] != first {
		t.Fatalf("queue order after the move %v", got)
	}
	if f := doc.Find(`[data-testid=flash]`); f.AttrOr("data-kind", "") != "ok" || !strings.Contains(f.Text(), "Moved second to position 1") {
		t.Fatalf("flash after the move: %q", f.Text())
	}
	if entries, _, err := p.srv.Store.AuditPage(context.Background(), "queue.move", "admin", 0, 10); err != nil || len(entries) != 1 || entries[0].Target != second {
		t.Fatalf("move audit %+v (%v)", entries, err)
	}
	// A request no longer queued: back to the queue with the reason.
	if res := p.postForm(c, "/admin/queue/"+second+"/cancel", url.Values{}); res.StatusCode != http.StatusSeeOther {
		t.Fatalf("cancel: %d", res.StatusCode)
	}
	p.get(c, "/admin/queue") // the cancel's flash
	if res := p.postForm(c, "/admin/queue/"+second+"/move", url.Values{"position": {"1"}}); res.StatusCode != http.StatusSeeOther {
		t.Fatalf("move of a cancelled request: %d", res.StatusCode)
	}
	_, body = p.get(c, "/admin/queue")
	if f := parsePage(t, body).Find(`[data-testid=flash]`); f.AttrOr("data-kind", "") != "error" || !strings.Contains(f.Text(), "no longer in the queue") {
		t.Fatalf("flash after moving a cancelled request: %q", f.Text())
	}
}

// /admin/reservations: the bill-unused checkbox saves the setting (the API
// reads it; audited in its transaction), the cap form adds a cap and each
// row's form changes or removes it, a bad name or number is shown back
// with the input kept, the report's period is checked and its CSV link
// answers the API's CSV; users cannot reach any of it.
func TestAdminReservationsPage(t *testing.T) {
	p := newPortal(t)
	ctx := context.Background()
	admin := tokenFor(t, p, "root", "admin")
	tokenFor(t, p, "alice", "user")
	c := p.client()
	p.loginSudo(c, "admin", adminPassword)

	res, body := p.get(c, "/admin/reservations")
	doc := parsePage(t, body)
	if res.StatusCode != 200 || doc.Find(`[data-testid=reservation-bill-unused]`).Is(":checked") || doc.Find(`[data-testid=reservation-caps-empty]`).Length() != 1 ||
		doc.Find(`[data-testid=reserved-unused-empty]`).Length() != 1 || doc.Find(`nav.tabs a[href="/admin/reservations"].active`).Length() != 1 {
		t.Fatalf("first view: %d", res.StatusCode)
	}
	csvHref := doc.Find(`[data-testid=reserved-unused-csv]`).AttrOr("href", "")
	if !strings.HasPrefix(csvHref, "/admin/reservations/unused.csv?") {
		t.Fatalf("CSV link %q", csvHref)
	}
	if res, body := p.get(c, csvHref); res.StatusCode != 200 || !strings.HasPrefix(res.Header.Get("Content-Type"), "text/csv") ||
		!strings.HasPrefix(body, "\ufeffuser,reservations,reserved_unit_hours") {
		t.Fatalf("CSV: %d %q %q", res.StatusCode, res.Header.Get("Content-Type"), body)
	}

	// The setting: on, then off.
	if res := p.postForm(c, "/admin/reservations/settings", url.Values{"bill_unused": {"on"}}); res.StatusCode != http.StatusSeeOther {
		t.Fatalf("setting on: %d", res.StatusCode)
	}
	var st handlers.APIReservationSettings
	if code := p.strictAPI("GET", "/api/v1/admin/reservation-settings", admin, "", &st); code != 200 || !st.BillUnused {
		t.Fatalf("after the checkbox: %d %+v", code, st)
	}
	_, body = p.get(c, "/admin/reservations")
	doc = parsePage(t, body)
	if !doc.Find(`[data-testid=reservation-bill-unused]`).Is(":checked") || !strings.Contains(doc.Find(`[data-testid=flash]`).Text(), "billed from now on") {
		t.Fatal("the page does not show the setting on")
	}
	if res := p.postForm(c, "/admin/reservations/settings", url.Values{}); res.StatusCode != http.StatusSeeOther {
		t.Fatalf("setting off: %d", res.StatusCode)
	}
	if p.strictAPI("GET", "/api/v1/admin/reservation-settings", admin, "", &st); st.BillUnused {
		t.Fatal("the unchecked box left the setting on")
	}
	if entries, _, err := p.srv.Store.AuditPage(ctx, "reservation.settings", "admin", 0, 10); err != nil || len(entries) != 2 {
		t.Fatalf("settings audit %+v (%v)", entries, err)
	}

	// Caps: a bad name and a bad number are shown back with what was typed.
	res, body = p.postFormBody(c, "/admin/reservations/caps", url.Values{"scope": {"user"}, "name": {"nobody"}, "unit_hours_per_week": {"12"}})
	doc = parsePage(t, body)
	if res.StatusCode != http.StatusBadRequest || !strings.Contains(doc.Find(`[data-testid=error-name]`).Text(), `no user "nobody"`) ||
		doc.Find(`[data-testid=reservation-cap-name]`).AttrOr("value", "") != "nobody" || doc.Find(`[data-testid=reservation-cap-new-hours]`).AttrOr("value", "") != "12" {
		t.Fatalf("unknown user: %d %q", res.StatusCode, doc.Find(`[data-testid=error-name]`).Text())
	}
	res, body = p.postFormBody(c, "/admin/reservations/caps", url.Values{"scope": {"user"}, "name": {"alice"}, "unit_hours_per_week": {"lots"}})
	if doc = parsePage(t, body); res.StatusCode != http.StatusBadRequest || doc.Find(`[data-testid=error-unit_hours_per_week]`).Length() != 1 {
		t.Fatalf("bad number: %d", res.StatusCode)
	}
	res, body = p.postFormBody(c, "/admin/reservations/caps", url.Values{"scope": {"user"}, "name": {"alice"}, "unit_hours_per_week": {"-3"}})
	if doc = parsePage(t, body); res.StatusCode != http.StatusBadRequest || !strings.Contains(doc.Find(`[data-testid=error-unit_hours_per_week]`).Text(), "0 or more") {
		t.Fatalf("negative cap: %d", res.StatusCode)
	}
	for _, f := range []url.Values{{"scope": {"user"}, "name": {"alice"}, "unit_hours_per_week": {"12"}}, {"scope": {"default"}, "name": {""}, "unit_hours_per_week": {"40"}}} {
		if res := p.postForm(c, "/admin/reservations/caps", f); res.StatusCode != http.StatusSeeOther {
			t.Fatalf("add cap %v: %d", f, res.StatusCode)
		}
	}
	_, body = p.get(c, "/admin/reservations")
	doc = parsePage(t, body)
	capHours := func(doc *goquery.Document, scope, name string) (string, bool) {
		row := doc.Find(`[data-testid=reservation-cap-row][data-scope="` + scope + `"][data-name="` + name + `"]`)
		return row.Find(`[data-testid=reservation-cap-hours]`).AttrOr("value", ""), row.Length() == 1
	}
	if h, ok := capHours(doc, "user", "alice"); !ok || h != "12" {
		t.Fatalf("alice's cap row: %v %q", ok, h)
	}
	if h, ok := capHours(doc, "default", "-"); !ok || h != "40" {
		t.Fatalf("default cap row: %v %q", ok, h)
	}
	// Each row's form posts its scope and name: change alice's, remove the default.
	if res := p.postForm(c, "/admin/reservations/caps", url.Values{"scope": {"user"}, "name": {"alice"}, "unit_hours_per_week": {"20"}}); res.StatusCode != http.StatusSeeOther {
		t.Fatalf("edit cap: %d", res.StatusCode)
	}
	if res := p.postForm(c, "/admin/reservations/caps", url.Values{"scope": {"default"}, "name": {"-"}, "unit_hours_per_week": {""}}); res.StatusCode != http.StatusSeeOther {
		t.Fatalf("remove cap: %d", res.StatusCode)
	}
	var caps handlers.APIList[handlers.APIReservationCap]
	if code := p.strictAPI("GET", "/api/v1/admin/reservation-caps", admin, "", &caps); code != 200 || len(caps.Items) != 1 || caps.Items[0].Scope != "user" ||
		caps.Items[0].UnitHoursPerWeek != 20 || caps.Items[0].UpdatedBy != "admin" {
		t.Fatalf("caps after the edits: %+v", caps)
	}
	if entries, _, err := p.srv.Store.AuditPage(ctx, "reservation.cap", "admin", 0, 10); err != nil || len(entries) != 4 {
		t.Fatalf("cap audit: %d entries (%v)", len(entries), err)
	}

	// A booking of alice's (a slice of a shared GPU, begun 2 h ago) shows
	// in the report as the API reports it.
	var gpus handlers.APIGPUList
	if code := p.strictAPI("GET", "/api/v1/gpus", admin, "", &gpus); code != 200 || len(gpus.Items) < 4 {
		t.Fatalf("gpus: %d", code)
	}
	model := gpus.Items[3].Model
	if code, body := p.api("PUT", "/api/v1/gpus/"+gpus.Items[3].UUID+"/shared", admin, `{"slices": 2}`); code != 200 {
		t.Fatalf("share: %d %v", code, body)
	}
	if code, body := p.api("POST", "/api/v1/flavors", admin, `{"name": "h100-slice", "gpu_model": "`+model+`", "gpu_count": 1, "unit_kind": "slice", "cpu_cores": 1, "memory_gib": 1}`); code != 201 {
		t.Fatalf("slice flavor: %d %v", code, body)
	}
	now := time.Now().UTC().Truncate(time.Second)
	if code, body := p.api("POST", "/api/v1/reservations", tokenFor(t, p, "alice", "user"), `{"gpu_model": "`+model+`", "unit_kind": "slice", "units": 1, "starts_at": "`+
		now.Add(-2*time.Hour).Format(time.RFC3339)+`", "ends_at": "`+now.Add(time.Hour).Format(time.RFC3339)+`"}`); code != http.StatusCreated {
		t.Fatalf("booking: %d %v", code, body)
	}
	var rep handlers.APIReservedUnusedReport
	if code := p.strictAPI("GET", "/api/v1/admin/reservations/unused", admin, "", &rep); code != 200 || len(rep.Items) != 1 {
		t.Fatalf("API report: %d %+v", code, rep)
	}
	_, body = p.get(c, "/admin/reservations")
	cells := parsePage(t, body).Find(`[data-testid=reserved-unused-row]`).First().Find("td")
	if cells.Length() != 7 || cells.Eq(0).Text() != "alice" || cells.Eq(1).Text() != "1" || cells.Eq(2).Text() != rep.Items[0].ReservedUnitHours ||
		cells.Eq(4).Text() != rep.Items[0].UnusedUnitHours || cells.Eq(6).Text() != "1" {
		t.Fatalf("report row %q, API %+v", cells.Text(), rep.Items[0])
	}

	// The report's period.
	res, body = p.get(c, "/admin/reservations?from=yesterday&to=2026-01-01")
	if doc = parsePage(t, body); res.StatusCode != http.StatusBadRequest || doc.Find(`[data-testid=error-from]`).Length() != 1 ||
		doc.Find(`[data-testid=reserved-unused-from]`).AttrOr("value", "") != "yesterday" {
		t.Fatalf("bad from: %d", res.StatusCode)
	}
	from := time.Now().UTC().AddDate(0, 0, -7).Format("2006-01-02")
	res, body = p.get(c, "/admin/reservations?from="+from)
	if doc = parsePage(t, body); res.StatusCode != 200 || !strings.Contains(doc.Find(`[data-testid=reserved-unused-period]`).Text(), from) ||
		!strings.Contains(doc.Find(`[data-testid=reserved-unused-csv]`).AttrOr("href", ""), "from="+from) {
		t.Fatalf("report from %s: %d %q", from, res.StatusCode, doc.Find(`[data-testid=reserved-unused-period]`).Text())
	}

	// Without the password confirmation the changes are refused (sudo).
	nosudo := p.client()
	p.login(nosudo, "admin", adminPassword)
	for _, path := range []string{"/admin/reservations/settings", "/admin/reservations/caps"} {
		if res, body := p.postFormBody(nosudo, path, url.Values{"scope": {"default"}, "unit_hours_per_week": {"1"}, "bill_unused": {"on"}}); res.StatusCode != http.StatusForbidden ||
			!strings.Contains(body, `data-testid="sudo-form"`) {
			t.Errorf("%s without sudo: %d", path, res.StatusCode)
		}
	}
	if caps, _ := p.srv.Store.ReservationCaps(ctx); len(caps) != 1 {
		t.Errorf("a change without sudo went through: %+v", caps)
	}

	user := p.client()
	p.login(user, "alice", "alice-password")
	for _, path := range []string{"/admin/reservations", "/admin/reservations/unused.csv", "/admin/simulate"} {
		if res, _ := p.get(user, path); res.StatusCode != http.StatusForbidden && res.StatusCode != http.StatusNotFound {
			t.Errorf("a user reached %s: %d", path, res.StatusCode)
		}
	}
	if res := p.postForm(user, "/admin/reservations/settings", url.Values{"bill_unused": {"on"}}); res.StatusCode != http.StatusForbidden && res.StatusCode != http.StatusNotFound {
		t.Errorf("a user changed the setting: %d", res.StatusCode)
	}
}

// seedLedgerRuns puts n finished two-hour one-GPU runs of user in the
// ledger (two days ago and before) on the pool's first model; it returns
// that model.
func seedLedgerRuns(t *testing.T, p *testPortal, username string, n int) string {
	t.Helper()
	ctx := context.Background()
	st := p.srv.Store
	u, err := st.UserByUsername(ctx, username)
	if err != nil {
		t.Fatal(err)
	}
	imgs, err := st.ListImages(ctx, true)
	if err != nil || len(imgs) == 0 {
		t.Fatalf("images: %v", err)
	}
	var gpus handlers.APIGPUList
	if code := p.strictAPI("GET", "/api/v1/gpus", tokenFor(t, p, "root", "admin"), "", &gpus); code != 200 || len(gpus.Items) == 0 {
		t.Fatalf("gpus: %d", code)
	}
	model := gpus.Items[0].Model
	fl := &models.Flavor{Name: "sim-one", GPUModel: model, GPUCount: 1, CPUMilli: 1000, MemoryMiB: 1024, Enabled: true}
	if err := st.CreateFlavor(ctx, fl); err != nil {
		t.Fatal(err)
	}
	now := time.Now().UTC().Truncate(time.Second)
	for i := range n {
		wb := &models.Workbench{Name: "past-" + string(rune('a'+i)), OwnerID: u.ID, ImageID: imgs[0].ID, FlavorID: fl.ID, Token: "t"}
		if err := st.EnqueueWorkbench(ctx, wb, nil); err != nil {
			t.Fatal(err)
		}
		start := now.Add(-time.Duration(48+i) * time.Hour)
		if err := st.OpenInterval(ctx, &models.UsageInterval{WorkbenchID: wb.ID, UserID: u.ID, GPUModel: model, GPUCount: 1, UnitKind: models.UnitGPU,
			CPUMilli: 1000, MemoryMiB: 1024, StartedAt: start}); err != nil {
			t.Fatal(err)
		}
		if err := st.CloseInterval(ctx, wb.ID, start.Add(2*time.Hour), "stopped"); err != nil {
			t.Fatal(err)
		}
		if err := st.LeaveQueue(ctx, wb.ID, models.StateStopped, "test"); err != nil {
			t.Fatal(err)
		}
	}
	return model
}

// /admin/simulate: the form offers every policy (checked) and the MIG
// split; run with two policies and "split the first 2 GPUs into 3g.40gb"
// it shows one row per policy with the API's figures and the simulator's
// SVG; bad input is shown beside its field with the form values kept.
func TestAdminSimulatePage(t *testing.T) {
	p := newPortal(t)
	tokenFor(t, p, "alice", "user")
	model := seedLedgerRuns(t, p, "alice", 3)
	c := p.client()
	p.loginSudo(c, "admin", adminPassword)

	res, body := p.get(c, "/admin/simulate")
	doc := parsePage(t, body)
	if res.StatusCode != 200 || doc.Find(`[data-testid=simulate-form] input[name=policy]:checked`).Length() != 4 || doc.Find(`[data-testid=simulate-result]`).Length() != 0 ||
		doc.Find(`[data-testid=simulate-form]`).AttrOr("method", "") != "get" || doc.Find(`[data-testid=simulate-mig-profile] option[selected]`).AttrOr("value", "") != "3g.40gb" {
		t.Fatalf("the form: %d", res.StatusCode)
	}

	q := url.Values{"run": {"1"}, "policy": {"exclusive-reject", "fair+preempt+sharing"}, "days": {"30"}, "mig_gpus": {"2"}, "mig_profile": {"3g.40gb"}}
	res, body = p.get(c, "/admin/simulate?"+q.Encode())
	doc = parsePage(t, body)
	rows := doc.Find(`[data-testid=simulate-row]`)
	if res.StatusCode != 200 || rows.Length() != 2 || rows.Eq(0).AttrOr("data-policy", "") != "exclusive-reject" || rows.Eq(1).AttrOr("data-policy", "") != "fair+preempt+sharing" {
		t.Fatalf("run: %d, %d rows", res.StatusCode, rows.Length())
	}
	if sum := doc.Find(`[data-testid=simulate-summary]`).Text(); !strings.Contains(sum, "3 runs of the last 30 days") || !strings.Contains(sum, "0:3g.40gb, 1:3g.40gb") ||
		!strings.Contains(sum, strings.TrimPrefix(model, "NVIDIA ")) {
		t.Fatalf("summary %q", sum)
	}
	// The same figures as the API's for the same replay.
	var sim handlers.APISimulation
	if code := p.strictAPI("GET", "/api/v1/admin/simulate?days=30&policy=exclusive-reject&policy=fair%2Bpreempt%2Bsharing&mig=0:3g.40gb&mig=1:3g.40gb",
		tokenFor(t, p, "root", "admin"), "", &sim); code != 200 {
		t.Fatalf("API replay: %d", code)
	}
	for i, r := range sim.Rows {
		if got, want := strings.TrimSpace(rows.Eq(i).Find(`[data-testid=simulate-utilisation]`).Text()), strconv.FormatFloat(r.UtilisationPct, 'f', 1, 64)+"%"; got != want {
			t.Errorf("%s: page %q, API %q", r.Policy, got, want)
		}
	}
	if svg := doc.Find(`[data-testid=simulate-chart] svg`); svg.Length() != 1 || !strings.Contains(svg.Find("title").First().Text(), "Policy comparison") ||
		svg.Find(`rect`).Length() < 4 {
		t.Fatalf("chart: %d svg", svg.Length())
	}
	if doc.Find(`[data-testid=simulate-costs]`).Length() != 1 || !strings.Contains(doc.Find(`[data-testid=simulate-costs]`).Text(), "alice") {
		t.Fatal("no cost per user")
	}
	// The form keeps what was asked.
	if doc.Find(`[data-testid=simulate-policy-queue-fifo]`).Is(":checked") || !doc.Find(`[data-testid="simulate-policy-exclusive-reject"]`).Is(":checked") ||
		doc.Find(`[data-testid=simulate-mig-gpus]`).AttrOr("value", "") != "2" {
		t.Fatal("the form lost its values after the run")
	}

	for _, tc := range []struct {
		q     url.Values
		field string
	}{
		{url.Values{"run": {"1"}, "policy": {"queue-fair"}, "mig_gpus": {"12"}, "mig_profile": {"3g.40gb"}}, "mig_gpus"},
		{url.Values{"run": {"1"}, "policy": {"queue-fair"}, "mig_gpus": {"1"}, "mig_profile": {"9g.1gb"}}, "mig_gpus"},
		{url.Values{"run": {"1"}, "policy": {"queue-fair"}, "gpus": {"2"}, "mig_gpus": {"3"}, "mig_profile": {"1g.10gb"}}, "mig_gpus"},
		{url.Values{"run": {"1"}, "policy": {"queue-fair"}, "gpus": {"99"}}, "gpus"},
		{url.Values{"run": {"1"}, "policy": {"queue-fair"}, "days": {"0"}}, "days"},
		{url.Values{"run": {"1"}, "policy": {"queue-fair"}, "mig": {"0:3g.40gb"}, "engine": {"scheduler"}}, "mig"},
		{url.Values{"run": {"1"}, "days": {"30"}}, "policy"},
	} {
		res, body := p.get(c, "/admin/simulate?"+tc.q.Encode())
		doc := parsePage(t, body)
		if res.StatusCode != http.StatusBadRequest || doc.Find(`[data-testid=error-`+tc.field+`]`).Length() != 1 || doc.Find(`[data-testid=simulate-result]`).Length() != 0 {
			t.Errorf("%s: %d, error on %s: %d", tc.q.Encode(), res.StatusCode, tc.field, doc.Find(`[data-testid=error-`+tc.field+`]`).Length())
		}
		for k, vs := range tc.q {
			sel := map[string]string{"days": "simulate-days", "gpus": "simulate-gpus", "mig_gpus": "simulate-mig-gpus", "mig": "simulate-mig"}[k]
			if sel != "" && doc.Find(`[data-testid=`+sel+`]`).AttrOr("value", "") != vs[0] {
				t.Errorf("%s: %s not kept", tc.q.Encode(), k)
			}
		}
	}
}

// drainGPUs drains every GPU of the pool but the first keep, through the
// admin API (admin is an admin's token): launches then queue.
func drainGPUs(t *testing.T, p *testPortal, admin string, keep int) {
	t.Helper()
	_, gpus := p.api("GET", "/api/v1/gpus", admin, "")
	for _, it := range gpus["items"].([]any)[keep:] {
		if code, out := p.api("PUT", "/api/v1/gpus/"+it.(map[string]any)["uuid"].(string)+"/drain", admin, `{"drained":true}`); code != 200 {
			t.Fatalf("drain: %d %v", code, out)
		}
	}
}
