package web_test

import (
	"fmt"
	"net/http"
	"net/url"
	"strings"
	"testing"
	"time"

	"github.com/PuerkitoBio/goquery"
)

const resvH100 = "gpu|NVIDIA H100 80GB HBM3|"

// resvForm is a booking form as a browser posts it (times in UTC).
func resvForm(pool string, units int, start, end time.Time, note string) url.Values {
	return url.Values{"pool": {pool}, "units": {fmt.Sprint(units)}, "starts_at": {start.Format("2006-01-02T15:04")},
		"ends_at": {end.Format("2006-01-02T15:04")}, "note": {note}}
}

func resvDoc(t *testing.T, body string) *goquery.Document {
	t.Helper()
	doc, err := goquery.NewDocumentFromReader(strings.NewReader(body))
	if err != nil {
		t.Fatal(err)
	}
	return doc
}

// The pool page's booking form and Cancel (real portal, SQLite): bad
// windows are refused beside the field with the values kept; a booking the
// pool cannot hold beside another is refused with the scheduler's reason;
// a booking lands in the list and on the timeline; others see "another
// user" and no Cancel, and cannot cancel it by posting; the booker (or an
// admin) cancels. The launch form offers one's bookings that fit, and a
// launch naming one that does not fit is refused beside the select.
func TestReservationFormAndCancel(t *testing.T) {
	p := newPortal(t)
	tokenFor(t, p, "alice", "user")
	tokenFor(t, p, "bob", "user")
	alice, bob, admin := p.client(), p.client(), p.client()
	p.login(alice, "alice", "alice-password")
	p.login(bob, "bob", "bob-password")
	p.login(admin, "admin", adminPassword)

	_, body := p.get(alice, "/gpus")
	doc := resvDoc(t, body)
	if doc.Find(`[data-testid=booking-form] select[name=pool] option[value="`+resvH100+`"]`).Length() != 1 {
		t.Fatalf("the booking form does not offer whole H100s: %s", doc.Find(`[data-testid=booking-form]`).Text())
	}

	start := time.Now().UTC().Add(2 * time.Hour).Truncate(time.Minute)
	// End before start: 400, told beside the end, the values kept.
	res, body := p.postFormBody(alice, "/reservations", resvForm(resvH100, 2, start, start.Add(-time.Hour), "exam"))
	doc = resvDoc(t, body)
	if res.StatusCode != http.StatusBadRequest || !strings.Contains(doc.Find(`[data-testid=error-ends_at]`).Text(), "after the start") {
		t.Fatalf("end before start: %d %q", res.StatusCode, doc.Find(`[data-testid=error-ends_at]`).Text())
	}
	if v, _ := doc.Find(`input[name=note]`).Attr("value"); v != "exam" {
		t.Errorf("note kept as %q", v)
	}
	if v, _ := doc.Find(`input[name=units]`).Attr("value"); v != "2" {
		t.Errorf("units kept as %q", v)
	}
	if v, _ := doc.Find(`select[name=pool] option[selected]`).Attr("value"); v != resvH100 {
		t.Errorf("pool kept as %q", v)
	}
	// A window in the past.
	res, body = p.postFormBody(alice, "/reservations", resvForm(resvH100, 1, start.Add(-6*time.Hour), start.Add(-5*time.Hour), ""))
	if res.StatusCode != http.StatusBadRequest || !strings.Contains(resvDoc(t, body).Find(`[data-testid=error-ends_at]`).Text(), "in the past") {
		t.Fatalf("past window: %d", res.StatusCode)
	}
	// A note of two lines (the field's maxlength stops a long one in the
	// browser; a posted one is refused the same way): told beside it (the
	// page showed no message at all).
	res, body = p.postFormBody(alice, "/reservations", resvForm(resvH100, 1, start, start.Add(time.Hour), "two\nlines"))
	if res.StatusCode != http.StatusBadRequest || !strings.Contains(resvDoc(t, body).Find(`[data-testid=error-note]`).Text(), "one line of at most 200 characters") {
		t.Fatalf("a note of two lines: %d %q", res.StatusCode, resvDoc(t, body).Find(`[data-testid=error-note]`).Text())
	}
	// More than the pool has.
	res, body = p.postFormBody(alice, "/reservations", resvForm(resvH100, 99, start, start.Add(time.Hour), ""))
	if res.StatusCode != http.StatusBadRequest || !strings.Contains(resvDoc(t, body).Find(`[data-testid=error-units]`).Text(), "the pool has") {
		t.Fatalf("99 units: %d %q", res.StatusCode, resvDoc(t, body).Find(`[data-testid=error-units]`).Text())
	}

	// Alice books 3 for two hours.
	res = p.postForm(alice, "/reservations", resvForm(resvH100, 3, start, start.Add(2*time.Hour), "course"))
	if res.StatusCode != http.StatusSeeOther || res.Header.Get("Location") != "/gpus#reservations" {
		t.Fatalf("book: %d %s", res.StatusCode, res.Header.Get("Location"))
	}
	_, body = p.get(alice, "/gpus")
	doc = resvDoc(t, body)
	row := doc.Find(`[data-testid=reservation-row]`)
	if row.Length() != 1 || !strings.Contains(row.Find(`[data-testid=reservation-what]`).Text(), "3 × H100 80GB HBM3") ||
		row.Find(`[data-testid=reservation-cancel]`).Length() != 1 {
		t.Fatalf("alice's list: %q", row.Text())
	}
	id, _ := row.Attr("data-id")
	if href := row.Find(`[data-testid=reservation-launch]`).AttrOr("href", ""); href != "/workbenches/new?reservation="+id+"&flavor=1x+H100+80GB+HBM3" {
		t.Errorf("launch link %q", href)
	}
	if !strings.Contains(doc.Find(`[data-testid=flash]`).Text()+body, "Booked #"+id) {
		t.Error("no confirmation of the booking")
	}
	bar := doc.Find(`[data-testid=timeline-row][data-id="` + id + `"] [data-testid=timeline-bar]`)
	if bar.Length() != 1 {
		t.Fatal("the booking is not on the timeline")
	}
	// Two hours of a seven-day scale of 1000: about 11.9 wide.
	if w := bar.AttrOr("width", ""); w != "11.9" {
		t.Errorf("bar width %q, want 11.9 (2 h of 7 days)", w)
	}

	// Bob: 6 more overlapping do not fit beside alice's 3 (8 GPUs).
	res, body = p.postFormBody(bob, "/reservations", resvForm(resvH100, 6, start.Add(30*time.Minute), start.Add(90*time.Minute), "mine"))
	doc = resvDoc(t, body)
	if res.StatusCode != http.StatusUnprocessableEntity || !strings.Contains(doc.Find(`[data-testid=booking-error]`).Text(), "3 of 8 are already reserved") {
		t.Fatalf("overlapping: %d %q", res.StatusCode, doc.Find(`[data-testid=booking-error]`).Text())
	}
	if v, _ := doc.Find(`input[name=units]`).Attr("value"); v != "6" {
		t.Errorf("bob's units kept as %q", v)
	}
	row = doc.Find(`[data-testid=reservation-row][data-id="` + id + `"]`)
	if row.Find(`[data-testid=reservation-launch]`).Length() != 0 {
		t.Error("bob is offered to launch with alice's booking")
	}
	if got := strings.TrimSpace(row.Find(`[data-testid=reservation-who]`).Text()); got != "another user" || row.Find(`[data-testid=reservation-cancel]`).Length() != 0 {
		t.Errorf("bob sees alice's booking as %q with %d cancel buttons", got, row.Find(`[data-testid=reservation-cancel]`).Length())
	}
	if strings.Contains(body, "course") {
		t.Error("bob sees alice's note")
	}
	// Over bob's weekly cap (1 unit-hour): refused above the form.
	rootToken := tokenFor(t, p, "admin", "admin")
	if code, out := p.api("PUT", "/api/v1/admin/reservation-caps/user/bob", rootToken, `{"unit_hours_per_week": 1}`); code != http.StatusNoContent {
		t.Fatalf("bob's cap: %d %v", code, out)
	}
	res, body = p.postFormBody(bob, "/reservations", resvForm(resvH100, 2, start.Add(4*time.Hour), start.Add(5*time.Hour), ""))
	if msg := resvDoc(t, body).Find(`[data-testid=booking-error]`).Text(); res.StatusCode != http.StatusUnprocessableEntity || !strings.Contains(msg, "Not booked") || !strings.Contains(msg, "limit") {
		t.Fatalf("over the cap: %d %q", res.StatusCode, msg)
	}
	if res := p.postForm(bob, "/reservations/"+id+"/cancel", nil); res.StatusCode != http.StatusNotFound {
		t.Fatalf("bob cancels alice's booking: %d", res.StatusCode)
	}

	// The launch form offers alice's booking for the flavors it fits.
	p.addImage(fakeCatalogImage("fake", "example.invalid/fake:1"))
	_, body = p.get(alice, "/workbenches/new")
	opt := resvDoc(t, body).Find(`select[name=reservation] option[value="` + id + `"]`)
	if opt.Length() != 1 || !strings.Contains(opt.AttrOr("data-flavors", ""), "1x H100 80GB HBM3") || strings.Contains(opt.AttrOr("data-flavors", ""), "CPU small") {
		t.Fatalf("launch form's booking option: %d %q", opt.Length(), opt.AttrOr("data-flavors", ""))
	}
	if _, body := p.get(bob, "/workbenches/new"); strings.Contains(body, `name="reservation"`) {
		t.Error("bob is offered a booking he does not have")
	}
	launch := url.Values{"image": {"fake"}, "flavor": {"CPU small"}, "name": {"nb"}, "idle_minutes": {"60"}, "queue": {"on"}, "reservation": {id}}
	res, body = p.postFormBody(alice, "/workbenches", launch)
	doc = resvDoc(t, body)
	if res.StatusCode != http.StatusBadRequest || !strings.Contains(doc.Find(`[data-testid=error-reservation]`).Text(), "asks for other units") {
		t.Fatalf("CPU flavor with the booking: %d %q", res.StatusCode, doc.Find(`[data-testid=error-reservation]`).Text())
	}
	if v, _ := doc.Find(`select[name=reservation] option[selected]`).Attr("value"); v != id {
		t.Errorf("the chosen booking was not kept: %q", v)
	}
	launch.Set("flavor", "1x H100 80GB HBM3")
	launch.Del("queue")
	res, body = p.postFormBody(alice, "/workbenches", launch)
	if res.StatusCode != http.StatusBadRequest || !strings.Contains(resvDoc(t, body).Find(`[data-testid=error-reservation]`).Text(), "launch with queue") {
		t.Fatalf("a booking not yet open without queue: %d", res.StatusCode)
	}

	// The admin cancels bob's booking; alice cancels her own.
	res = p.postForm(bob, "/reservations", resvForm(resvH100, 1, start.Add(4*time.Hour), start.Add(4*time.Hour+30*time.Minute), ""))
	if res.StatusCode != http.StatusSeeOther {
		t.Fatalf("bob books: %d", res.StatusCode)
	}
	_, body = p.get(admin, "/gpus")
	doc = resvDoc(t, body)
	if n := doc.Find(`[data-testid=reservation-cancel]`).Length(); n != 2 {
		t.Fatalf("the admin sees %d cancel buttons, want 2", n)
	}
	bobs := doc.Find(`[data-testid=reservation-row]`).Last()
	if who := strings.TrimSpace(bobs.Find(`[data-testid=reservation-who]`).Text()); who != "bob" {
		t.Errorf("the admin sees the booker as %q", who)
	}
	answered := url.Values{"confirmed": {"true"}} // the page's confirm() said yes
	if res := p.postForm(admin, bobs.Find("form").AttrOr("action", "?"), answered); res.StatusCode != http.StatusSeeOther {
		t.Fatalf("admin cancels bob's: %d", res.StatusCode)
	}
	// No script ran: the question first, and the booking stays.
	res, body = p.postFormBody(alice, "/reservations/"+id+"/cancel", nil)
	if q := resvDoc(t, body).Find(`[data-testid=confirm-question]`).Text(); res.StatusCode != http.StatusOK || !strings.Contains(q, "Cancel booking #"+id+"?") {
		t.Fatalf("alice cancels, unanswered: %d %q, want the question", res.StatusCode, q)
	}
	if _, body := p.get(alice, "/gpus"); resvDoc(t, body).Find(`[data-testid=reservation-row]`).Length() != 1 {
		t.Fatal("the unanswered cancel released the booking")
	}
	if res := p.postForm(alice, "/reservations/"+id+"/cancel", answered); res.StatusCode != http.StatusSeeOther {
		t.Fatalf("alice cancels: %d", res.StatusCode)
	}
	if _, body := p.get(alice, "/gpus"); resvDoc(t, body).Find(`[data-testid=reservation-row]`).Length() != 0 {
		t.Error("cancelled bookings still listed")
	}
}

// A user whose weekly booking limit is 0 is told so where the form would
// be (it was offered, and refused only once filled in); with a limit above
// 0 the form is back.
func TestBookingFormClosedAtAZeroLimit(t *testing.T) {
	p := newPortal(t)
	tokenFor(t, p, "carl", "user")
	rootToken := tokenFor(t, p, "admin", "admin")
	carl := p.client()
	p.login(carl, "carl", "carl-password")
	if code, out := p.api("PUT", "/api/v1/admin/reservation-caps/user/carl", rootToken, `{"unit_hours_per_week": 0}`); code != http.StatusNoContent {
		t.Fatalf("carl's limit: %d %v", code, out)
	}
	_, body := p.get(carl, "/gpus")
	doc := resvDoc(t, body)
	if doc.Find(`[data-testid=booking-form]`).Length() != 0 || !strings.Contains(doc.Find(`[data-testid=booking-closed]`).Text(), "0 unit-hours a week") {
		t.Fatalf("at a limit of 0: %d forms, notice %q", doc.Find(`[data-testid=booking-form]`).Length(), doc.Find(`[data-testid=booking-closed]`).Text())
	}
	if empty := doc.Find(`[data-testid=reservations-empty]`).Text(); strings.Contains(empty, "Book units below") {
		t.Errorf("the empty list invites carl to book: %q", empty)
	}
	if code, out := p.api("PUT", "/api/v1/admin/reservation-caps/user/carl", rootToken, `{"unit_hours_per_week": 4}`); code != http.StatusNoContent {
		t.Fatalf("carl's limit: %d %v", code, out)
	}
	if _, body := p.get(carl, "/gpus"); resvDoc(t, body).Find(`[data-testid=booking-form]`).Length() != 1 {
		t.Fatal("with a limit of 4 the form is not back")
	}
}

// A user whose monthly budget is used up is refused a booking for this
// month above the form, what was typed kept, and through the API with
// quota_exceeded (a booking nobody can launch on kept GPUs from others,
// and was billed past the budget as unused time); from next month on, the
// booking is taken.
func TestBookingRefusedWithTheBudgetUsedUp(t *testing.T) {
	p := newPortal(t)
	userToken := tokenFor(t, p, "dana", "user")
	rootToken := tokenFor(t, p, "admin", "admin")
	dana := p.client()
	p.login(dana, "dana", "dana-password")
	if code, out := p.api("PUT", "/api/v1/admin/quotas/users/dana", rootToken, `{"budget_per_month_micros": 0}`); code != http.StatusOK {
		t.Fatalf("dana's budget: %d %v", code, out)
	}
	now := time.Now().UTC()
	next := time.Date(now.Year(), now.Month()+1, 1, 0, 0, 0, 0, time.UTC)
	start := now.Truncate(time.Minute) // this month, whenever the test runs (a window begun starts now)
	res, body := p.postFormBody(dana, "/reservations", resvForm(resvH100, 1, start, start.Add(time.Hour), "thesis"))
	doc := resvDoc(t, body)
	msg := doc.Find(`[data-testid=booking-error]`).Text()
	if res.StatusCode != http.StatusUnprocessableEntity || !strings.Contains(msg, "budget is used up") || !strings.Contains(msg, "book from then") ||
		!strings.Contains(msg, next.Format("2006-01-02 15:04 UTC")) {
		t.Fatalf("booking with the budget used up: %d %q", res.StatusCode, msg)
	}
	if v, _ := doc.Find(`input[name=note]`).Attr("value"); v != "thesis" {
		t.Errorf("note kept as %q", v)
	}
	code, out := p.api("POST", "/api/v1/reservations", userToken, fmt.Sprintf(`{"gpu_model": "NVIDIA H100 80GB HBM3", "units": 1, "starts_at": %q, "ends_at": %q}`,
		start.Format(time.RFC3339), start.Add(time.Hour).Format(time.RFC3339)))
	if e, _ := out["error"].(map[string]any); code != http.StatusUnprocessableEntity || e["code"] != "quota_exceeded" {
		t.Fatalf("API booking with the budget used up: %d %v", code, out)
	}
	res = p.postForm(dana, "/reservations", resvForm(resvH100, 1, next.Add(time.Hour), next.Add(2*time.Hour), "next month"))
	if res.StatusCode != http.StatusSeeOther {
		t.Fatalf("a booking from next month: %d", res.StatusCode)
	}
}
