package web_test

import (
	"fmt"
	"net/http"
	"strings"
	"testing"
	"time"
)

// Reservations through the API and the pool page: a user books GPUs for a
// window; a booking the pool cannot hold beside it is refused with the
// reason; a window in the past is refused; everyone sees the timeline, only
// the booker and admins see who; only the booker (or an admin) cancels.
func TestReservationAPI(t *testing.T) {
	p := newPortal(t)
	alice := tokenFor(t, p, "alice", "user")
	bob := tokenFor(t, p, "bob", "user")
	start := time.Now().UTC().Add(time.Hour).Truncate(time.Minute)
	window := func(units int, from time.Time) string {
		return fmt.Sprintf(`{"gpu_model":"NVIDIA H100 80GB HBM3","units":%d,"starts_at":%q,"ends_at":%q,"note":"course"}`,
			units, from.Format(time.RFC3339), from.Add(time.Hour).Format(time.RFC3339))
	}
	code, r := p.api("POST", "/api/v1/reservations", alice, window(3, start))
	if code != http.StatusCreated || r["units"] != 3.0 || r["user"] != "alice" {
		t.Fatalf("book: %d %v", code, r)
	}
	if code, out := p.api("POST", "/api/v1/reservations", bob, window(6, start.Add(30*time.Minute))); code != http.StatusUnprocessableEntity ||
		!strings.Contains(out["error"].(map[string]any)["message"].(string), "3 of 8 are already reserved") {
		t.Fatalf("overbooking: %d %v", code, out)
	}
	if code, out := p.api("POST", "/api/v1/reservations", bob, window(1, start.Add(-3*time.Hour))); code != http.StatusBadRequest {
		t.Fatalf("past window: %d %v", code, out)
	}
	if code, out := p.api("POST", "/api/v1/reservations", bob, window(5, start)); code != http.StatusCreated {
		t.Fatalf("bob books the rest: %d %v", code, out)
	}
	_, list := p.api("GET", "/api/v1/reservations", bob, "")
	users := []string{}
	for _, it := range list["items"].([]any) {
		users = append(users, it.(map[string]any)["user"].(string))
	}
	if strings.Join(users, ",") != "another user,bob" {
		t.Fatalf("bob sees %v", users)
	}
	c := p.client()
	p.login(c, "bob", "bob-password")
	if _, body := p.get(c, "/gpus"); strings.Count(body, `data-testid="reservation-row"`) != 2 {
		t.Fatalf("the pool page does not list both reservations")
	}
	id := fmt.Sprint(int64(r["id"].(float64)))
	if code, _ := p.api("DELETE", "/api/v1/reservations/"+id, bob, ""); code != http.StatusNotFound {
		t.Fatalf("bob cancelled alice's reservation: %d", code)
	}
	if code, _ := p.api("DELETE", "/api/v1/reservations/"+id, alice, ""); code != http.StatusNoContent {
		t.Fatalf("alice cancels: %d", code)
	}
	if _, list := p.api("GET", "/api/v1/reservations", alice, ""); len(list["items"].([]any)) != 1 {
		t.Fatalf("after the cancel: %v", list)
	}
}

// A booking ending before it starts, or over two weeks, is refused naming
// what is wrong ("give a start and an end after it" for an end before the
// start; a limit written as "336h0m0s").
func TestReservationRefusalsNameTheProblem(t *testing.T) {
	p := newPortal(t)
	alice := tokenFor(t, p, "alice", "user")
	start := time.Now().UTC().Add(time.Hour).Truncate(time.Minute)
	for _, c := range []struct{ body, code, says string }{
		{fmt.Sprintf(`{"gpu_model":"NVIDIA H100 80GB HBM3","units":1,"starts_at":%q,"ends_at":%q}`, start.Format(time.RFC3339), start.Add(-time.Hour).Format(time.RFC3339)), "invalid_ends_at", "give an end after the start"},
		{fmt.Sprintf(`{"gpu_model":"NVIDIA H100 80GB HBM3","units":1,"starts_at":%q,"ends_at":%q}`, start.Format(time.RFC3339), start.Add(15*24*time.Hour).Format(time.RFC3339)), "invalid_ends_at", "at most 14 days"},
		// A note is bounded (it was stored twice and shown on every admin's
		// GPU page, a megabyte each) and one line.
		{fmt.Sprintf(`{"gpu_model":"NVIDIA H100 80GB HBM3","units":1,"starts_at":%q,"ends_at":%q,"note":%q}`, start.Format(time.RFC3339), start.Add(time.Hour).Format(time.RFC3339), strings.Repeat("长", 201)), "invalid_note", "at most 200 characters"},
		{fmt.Sprintf(`{"gpu_model":"NVIDIA H100 80GB HBM3","units":1,"starts_at":%q,"ends_at":%q,"note":"two\nlines"}`, start.Format(time.RFC3339), start.Add(time.Hour).Format(time.RFC3339)), "invalid_note", "one line"},
	} {
		code, out := p.api("POST", "/api/v1/reservations", alice, c.body)
		if code != http.StatusBadRequest || errCode(out) != c.code || !strings.Contains(errMessage(out), c.says) {
			t.Errorf("%s: %d %v, want 400 %s saying %q", c.body, code, out, c.code, c.says)
		}
	}
	// A note of 200 characters, Chinese ones included, is taken.
	body := fmt.Sprintf(`{"gpu_model":"NVIDIA H100 80GB HBM3","units":1,"starts_at":%q,"ends_at":%q,"note":%q}`,
		start.Format(time.RFC3339), start.Add(time.Hour).Format(time.RFC3339), strings.Repeat("长", 200))
	if code, out := p.api("POST", "/api/v1/reservations", alice, body); code != http.StatusCreated {
		t.Errorf("a note of 200 characters: %d %v", code, out)
	}
}
