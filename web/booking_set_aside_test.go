package web_test

import (
	"fmt"
	"net/http"
	"strings"
	"testing"
	"time"
)

// While unused booked time is billed, what a user's booking would bill
// left unused is set aside of the month's budget: the usage page and
// /api/v1/me say how much, and a launch off the booking that does not fit
// beside it is refused, naming it. Checked only when booking, the booker
// could then spend the budget on other work and be billed the unused
// booked time past it.
func TestBookingSetAsideHoldsOtherLaunchesBack(t *testing.T) {
	p := newPortal(t)
	// Refused before any container is made: the image need not exist.
	p.addImage(fakeCatalogImage("fake", "workbench-test/never-pulled:latest"))
	admin := tokenFor(t, p, "admin", "admin")
	dana := tokenFor(t, p, "dana", "user")
	if code, out := p.api("PUT", "/api/v1/admin/reservation-settings", admin, `{"bill_unused": true}`); code != http.StatusOK {
		t.Fatalf("bill unused time: %d %v", code, out)
	}
	if code, out := p.api("PUT", "/api/v1/admin/quotas/users/dana", admin, `{"budget_per_month_micros": 1000000000}`); code != http.StatusOK {
		t.Fatalf("dana's budget: %d %v", code, out)
	}
	start := time.Now().UTC().Truncate(time.Minute).Add(10 * time.Minute)
	if code, out := p.api("POST", "/api/v1/reservations", dana, fmt.Sprintf(`{"gpu_model": "NVIDIA H100 80GB HBM3", "units": 2, "starts_at": %q, "ends_at": %q}`,
		start.Format(time.RFC3339), start.Add(time.Hour).Format(time.RFC3339))); code != http.StatusCreated {
		t.Fatalf("book 2 GPUs: %d %v", code, out)
	}
	setAside := func() int64 {
		t.Helper()
		code, me := p.api("GET", "/api/v1/me", dana, "")
		usage, _ := me["usage"].(map[string]any)
		if code != http.StatusOK || usage == nil {
			t.Fatalf("/api/v1/me: %d %v", code, me)
		}
		return int64(num(usage["booking_set_aside_micros"]))
	}
	aside := setAside()
	if aside <= 0 {
		if start.Month() != time.Now().UTC().Month() {
			t.Skip("the booking lies in next month: nothing of this month's budget is set aside")
		}
		t.Fatalf("set aside %d µ for 2 booked GPU-hours", aside)
	}
	// A budget of just what the booking sets aside: nothing is left for
	// other work.
	if code, out := p.api("PUT", "/api/v1/admin/quotas/users/dana", admin, fmt.Sprintf(`{"budget_per_month_micros": %d}`, aside)); code != http.StatusOK {
		t.Fatalf("dana's budget: %d %v", code, out)
	}
	code, body := p.api("POST", "/api/v1/workbenches", dana, `{"name":"other","image":"fake","flavor":"1x H100 80GB HBM3"}`)
	if code != http.StatusUnprocessableEntity || errCode(body) != "quota_exceeded" || !strings.Contains(errMessage(body), "your bookings would bill") || !strings.Contains(errMessage(body), "all of the") {
		t.Fatalf("a launch off the booking with the budget set aside: %d %v; want 422 quota_exceeded naming the set-aside", code, body)
	}
	c := p.client()
	p.login(c, "dana", "dana-password")
	_, page := p.get(c, "/usage")
	note := strings.TrimSpace(mpDoc(t, page).Find(`[data-testid=quota-bar-spend] [data-testid=quota-note]`).Text())
	if !strings.Contains(note, "Your bookings would bill") || !strings.Contains(note, "set aside of the budget") {
		t.Errorf("the spend bar's note reads %q; want what the booking sets aside", note)
	}
	// The pages people launch from say it before a launch is refused,
	// and so does /api/v1/me.
	_, home := p.get(c, "/")
	if !strings.Contains(home, "only launches on your bookings can start") {
		t.Errorf("the home page does not say that only launches on the booking can start")
	}
	_, me := p.api("GET", "/api/v1/me", dana, "")
	usage, _ := me["usage"].(map[string]any)
	if w := fmt.Sprint(usage["warnings"]); !strings.Contains(w, "only launches on your bookings can start") {
		t.Errorf("/api/v1/me warns %s", w)
	}
	// Unused time no longer billed: nothing is set aside.
	if code, out := p.api("PUT", "/api/v1/admin/reservation-settings", admin, `{"bill_unused": false}`); code != http.StatusOK {
		t.Fatalf("bill unused time off: %d %v", code, out)
	}
	if got := setAside(); got != 0 {
		t.Errorf("set aside %d µ while unused time is not billed", got)
	}
}
