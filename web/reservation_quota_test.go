package web_test

import (
	"context"
	"net/http"
	"strings"
	"testing"
	"time"

	"workbench/models"
)

// The pool page's booking form refuses a booking of more GPUs than the
// booker's quota lets them hold at once, above the form, with the reason in
// the reader's language (a reason the scheduler words, translated like the
// launch refusals); the API says it with its code. An administrator
// booking for the user hears whose quota refused it.
func TestBookingBeyondTheQuotaIsRefusedInTheReadersLanguage(t *testing.T) {
	p := newPortal(t)
	ctx := context.Background()
	lin, err := p.srv.Store.CreateUser(ctx, models.NewUser{Username: "lin", Password: "lin-password-1", Role: models.RoleUser})
	if err != nil {
		t.Fatal(err)
	}
	one := int64(1)
	if err := p.srv.Store.SetQuota(ctx, models.ScopeUser, lin.ID, models.Limits{MaxGPUs: &one}, "admin"); err != nil {
		t.Fatal(err)
	}
	zh, en := p.readersSignedIn("lin", "lin-password-1")
	start := time.Now().UTC().Add(2 * time.Hour).Truncate(time.Minute)

	for c, want := range map[*http.Client]string{
		en: "Not booked: your quota allows at most 1 GPU at once.",
		zh: "未能预约：你的配额同时最多允许 1 块 GPU。",
	} {
		res, body := p.postFormBody(c, "/reservations", resvForm(resvH100, 2, start, start.Add(time.Hour), "run"))
		if got := strings.TrimSpace(resvDoc(t, body).Find(`[data-testid=booking-error]`).Text()); res.StatusCode != http.StatusUnprocessableEntity || got != want {
			t.Errorf("booking 2 with a quota of 1: %d %q, want 422 %q", res.StatusCode, got, want)
		}
	}
	if rs, err := p.srv.Store.Reservations(ctx, time.Now()); err != nil || len(rs) != 0 {
		t.Fatalf("bookings after the refusals: %d (%v)", len(rs), err)
	}
	code, out := p.api("POST", "/api/v1/reservations", tokenFor(t, p, "lin", "user"),
		`{"gpu_model":"NVIDIA H100 80GB HBM3","units":2,"starts_at":"`+start.Format(time.RFC3339)+`","ends_at":"`+start.Add(time.Hour).Format(time.RFC3339)+`"}`)
	if code != http.StatusUnprocessableEntity || errCode(out) != "quota_exceeded" {
		t.Fatalf("API booking beyond the quota: %d %v", code, out)
	}

	// An administrator booking for lin is refused by lin's quota, and the
	// reason names whose quota it is (not "your", which would be the
	// administrator's).
	code, out = p.api("POST", "/api/v1/reservations", tokenFor(t, p, "admin", "admin"),
		`{"user":"lin","gpu_model":"NVIDIA H100 80GB HBM3","units":2,"starts_at":"`+start.Format(time.RFC3339)+`","ends_at":"`+start.Add(time.Hour).Format(time.RFC3339)+`"}`)
	const want = "lin's quota allows at most 1 GPU at once; raise it before booking this many"
	if code != http.StatusUnprocessableEntity || errCode(out) != "quota_exceeded" || errMessage(out) != want {
		t.Fatalf("an admin's booking for lin beyond lin's quota: %d %v, want 422 quota_exceeded %q", code, out, want)
	}
}
