package web_test

import (
	"context"
	"encoding/csv"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"strconv"
	"strings"
	"testing"
	"time"

	"workbench/handlers"
)

// Reservations of slices, the weekly cap, the "reservation" launch field
// and the admin's reserved-but-unused report through the API, on a real
// SQLite file: answers decode strictly into handlers' API types; users
// cannot reach the admin endpoints; settings and caps are audited.
func TestReservationCapSettingsAndUnusedReportAPI(t *testing.T) {
	p := newPortal(t)
	ctx := context.Background()
	admin := tokenFor(t, p, "root", "admin")
	alice := tokenFor(t, p, "alice", "user")
	bob := tokenFor(t, p, "bob", "user")
	var gpus handlers.APIGPUList
	if code := p.strictAPI("GET", "/api/v1/gpus", admin, "", &gpus); code != 200 || len(gpus.Items) != 8 {
		t.Fatalf("gpus: %d %d", code, len(gpus.Items))
	}
	uuid, model := gpus.Items[3].UUID, gpus.Items[3].Model
	if code, body := p.api("PUT", "/api/v1/gpus/"+uuid+"/shared", admin, `{"slices": 2}`); code != 200 {
		t.Fatalf("share: %d %v", code, body)
	}
	if code, body := p.api("POST", "/api/v1/flavors", admin, fmt.Sprintf(`{"name": "h100-slice", "gpu_model": %q, "gpu_count": 1, "unit_kind": "slice", "cpu_cores": 1, "memory_gib": 1}`, model)); code != 201 {
		t.Fatalf("slice flavor: %d %v", code, body)
	}

	// The cap: admins only; none at all by default (the arithmetic is
	// tested in orchestrator, TestMemReservationWeeklyCap).
	if code, _ := p.api("PUT", "/api/v1/admin/reservation-caps/default/-", alice, `{"unit_hours_per_week": 100}`); code != http.StatusForbidden {
		t.Fatalf("a user set the cap: %d", code)
	}
	if code := p.strictAPI("PUT", "/api/v1/admin/reservation-caps/default/-", admin, `{"unit_hours_per_week": 0}`, nil); code != http.StatusNoContent {
		t.Fatalf("set the default cap: %d", code)
	}
	if code, body := p.api("PUT", "/api/v1/admin/reservation-caps/group/nobody", admin, `{"unit_hours_per_week": 2}`); code != http.StatusBadRequest || errCode(body) != "invalid_name" {
		t.Fatalf("cap of an unknown group: %d %v", code, body)
	}
	var caps handlers.APIList[handlers.APIReservationCap]
	if code := p.strictAPI("GET", "/api/v1/admin/reservation-caps", admin, "", &caps); code != 200 || len(caps.Items) != 1 ||
		caps.Items[0].Scope != "default" || caps.Items[0].UnitHoursPerWeek != 0 || caps.Items[0].UpdatedBy != "root" {
		t.Fatalf("caps: %d %+v", code, caps)
	}
	// A slice booking begun 2 h ago, ending in 1 h: over a cap of 0.
	now := time.Now().UTC().Truncate(time.Second)
	book := func(token string, from, to time.Time) (int, handlers.APIReservation) {
		var r handlers.APIReservation
		code := p.strictAPI("POST", "/api/v1/reservations", token, fmt.Sprintf(`{"gpu_model": %q, "unit_kind": "slice", "units": 1, "starts_at": %q, "ends_at": %q}`,
			model, from.Format(time.RFC3339), to.Format(time.RFC3339)), &r)
		return code, r
	}
	from := now.Add(-2 * time.Hour)
	if code, _ := book(alice, from, now.Add(time.Hour)); code != http.StatusUnprocessableEntity {
		t.Fatalf("over the cap: %d", code)
	}
	if code := p.strictAPI("PUT", "/api/v1/admin/reservation-caps/user/alice", admin, `{"unit_hours_per_week": 50}`, nil); code != http.StatusNoContent {
		t.Fatalf("alice's cap: %d", code)
	}
	bookedAt := time.Now()
	code, active := book(alice, from, now.Add(time.Hour))
	if code != http.StatusCreated || active.UnitKind != "slice" || active.Label != "slice of a shared H100 80GB HBM3" || !active.Active || active.User != "alice" {
		t.Fatalf("booking: %d %+v", code, active)
	}
	code, later := book(alice, now.Add(48*time.Hour), now.Add(49*time.Hour))
	if code != http.StatusCreated {
		t.Fatalf("later booking: %d", code)
	}
	audit, err := p.srv.Store.ListAudit(ctx, 50)
	if err != nil {
		t.Fatal(err)
	}
	caps2 := 0
	for _, a := range audit {
		if a.Action == "reservation.cap" {
			caps2++
		}
	}
	if caps2 != 2 {
		t.Fatalf("%d reservation.cap audit entries, want 2", caps2)
	}

	// The launch field: someone else's booking is refused; one's own future
	// booking queues the launch until its window.
	imgs, err := p.srv.Store.ListImages(ctx, true)
	if err != nil || len(imgs) == 0 {
		t.Fatalf("images: %v", err)
	}
	launch := func(id int64) string {
		return fmt.Sprintf(`{"name": "pinned", "image": %q, "flavor": "h100-slice", "queue": true, "reservation": %d}`, imgs[0].Name, id)
	}
	if code, body := p.api("POST", "/api/v1/workbenches", bob, launch(later.ID)); code != http.StatusBadRequest || errCode(body) != "invalid_reservation" {
		t.Fatalf("bob names alice's booking: %d %v", code, body)
	}
	var wb handlers.APIWorkbench
	if code := p.strictAPI("POST", "/api/v1/workbenches", alice, launch(later.ID), &wb); code != http.StatusAccepted ||
		wb.State != "queued" || wb.Reservation == nil || *wb.Reservation != later.ID || !strings.Contains(wb.QueueReason, "waiting for your reservation #") {
		t.Fatalf("pinned launch: %d %+v", code, wb)
	}

	// The setting, audited; users may not read it.
	var set handlers.APIReservationSettings
	if code := p.strictAPI("GET", "/api/v1/admin/reservation-settings", admin, "", &set); code != 200 || set.BillUnused {
		t.Fatalf("default setting: %d %+v", code, set)
	}
	if code := p.strictAPI("PUT", "/api/v1/admin/reservation-settings", admin, `{"bill_unused": true}`, &set); code != 200 || !set.BillUnused {
		t.Fatalf("turn billing on: %d %+v", code, set)
	}
	if code, _ := p.api("GET", "/api/v1/admin/reservation-settings", alice, ""); code != http.StatusForbidden {
		t.Fatalf("a user read the setting: %d", code)
	}

	// The report: alice's running booking, unused so far (to now). Its
	// window was already open when booked: it counts from the booking
	// (docs/scheduling.md: it starts now), not from two hours before it.
	var rep handlers.APIReservedUnusedReport
	if code := p.strictAPI("GET", "/api/v1/admin/reservations/unused", admin, "", &rep); code != 200 || !rep.BillUnused || len(rep.Items) != 1 {
		t.Fatalf("report: %d %+v", code, rep)
	}
	held := int64(time.Since(bookedAt) / time.Second)
	it := rep.Items[0]
	if it.User != "alice" || it.Reservations != 1 || it.Unsettled != 1 || it.UsedUnitHours != "0.00" ||
		it.UnusedUnitSeconds < held-5 || it.UnusedUnitSeconds > held+60 || it.BilledMicros != 0 {
		t.Fatalf("alice's line %+v (held about %d s)", it, held)
	}
	if code, _ := p.api("GET", "/api/v1/admin/reservations/unused?from=yesterday", admin, ""); code != http.StatusBadRequest {
		t.Fatalf("bad from: %d", code)
	}
	if code, _ := p.api("GET", "/api/v1/admin/reservations/unused", alice, ""); code != http.StatusForbidden {
		t.Fatalf("a user read the report: %d", code)
	}
	req, _ := http.NewRequest("GET", p.ts.URL+"/api/v1/admin/reservations/unused?format=csv&from="+now.AddDate(0, 0, -1).Format("2006-01-02"), nil)
	req.Header.Set("Authorization", "Bearer "+admin)
	res, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer res.Body.Close()
	b, _ := io.ReadAll(res.Body)
	rows, err := csv.NewReader(strings.NewReader(strings.TrimPrefix(string(b), "\ufeff"))).ReadAll()
	if err != nil || res.StatusCode != 200 || !strings.HasPrefix(res.Header.Get("Content-Type"), "text/csv") || len(rows) != 2 ||
		rows[0][0] != "user" || rows[1][0] != "alice" {
		t.Fatalf("csv: %d %q %v (%v)", res.StatusCode, res.Header.Get("Content-Type"), rows, err)
	}
	if secs, err := strconv.ParseInt(rows[1][5], 10, 64); err != nil || secs < it.UnusedUnitSeconds || rows[1][3] != "0.00" || rows[1][9] != "1" {
		t.Fatalf("csv line %v", rows[1])
	}
}

// The launch form's reservation field (posted without JavaScript): a bad
// number or someone else's booking is refused with the reason shown as the
// form's error; the user's own future booking queues the launch for it.
func TestLaunchFormReservationField(t *testing.T) {
	p := newPortal(t)
	ctx := context.Background()
	alice := tokenFor(t, p, "alice", "user")
	tokenFor(t, p, "bob", "user")
	imgs, err := p.srv.Store.ListImages(ctx, true)
	if err != nil || len(imgs) == 0 {
		t.Fatalf("images: %v", err)
	}
	fls, err := p.srv.Store.ListFlavors(ctx, false)
	if err != nil {
		t.Fatal(err)
	}
	var flavor, model string
	for _, f := range fls {
		if f.GPUCount == 1 && (f.UnitKind == "" || f.UnitKind == "gpu") {
			flavor, model = f.Name, f.GPUModel
		}
	}
	from := time.Now().UTC().Add(48 * time.Hour).Truncate(time.Second)
	var r handlers.APIReservation
	if code := p.strictAPI("POST", "/api/v1/reservations", alice, fmt.Sprintf(`{"gpu_model": %q, "units": 1, "starts_at": %q, "ends_at": %q}`,
		model, from.Format(time.RFC3339), from.Add(time.Hour).Format(time.RFC3339)), &r); code != http.StatusCreated {
		t.Fatalf("booking: %d", code)
	}
	form := func(name, reservation string) url.Values {
		return url.Values{"name": {name}, "image": {imgs[0].Name}, "flavor": {flavor}, "queue": {"on"}, "reservation": {reservation}}
	}
	bc := p.client()
	p.login(bc, "bob", "bob-password")
	for _, c := range []struct{ value, want string }{
		{"seven", "give the reservation&#39;s number."},
		{strconv.FormatInt(r.ID, 10), fmt.Sprintf("you have no reservation #%d", r.ID)},
	} {
		res, page := p.postFormBody(bc, "/workbenches", form("b", c.value))
		// The refusal is shown beside the form's "Use a booking" select.
		if res.StatusCode != http.StatusBadRequest || !strings.Contains(page, `data-testid="error-reservation"`) || !strings.Contains(page, c.want) {
			t.Fatalf("reservation %q: %d, page lacks %q beside the reservation field", c.value, res.StatusCode, c.want)
		}
	}
	ac := p.client()
	p.login(ac, "alice", "alice-password")
	res, _ := p.postFormBody(ac, "/workbenches", form("a", "#"+strconv.FormatInt(r.ID, 10)))
	if res.StatusCode != http.StatusSeeOther {
		t.Fatalf("alice's launch for her booking: %d", res.StatusCode)
	}
	id := strings.TrimPrefix(res.Header.Get("Location"), "/workbenches/")
	var wb handlers.APIWorkbench
	if code := p.strictAPI("GET", "/api/v1/workbenches/"+id, alice, "", &wb); code != 200 || wb.State != "queued" || wb.Reservation == nil || *wb.Reservation != r.ID {
		t.Fatalf("launched: %d %+v", code, wb)
	}
}
