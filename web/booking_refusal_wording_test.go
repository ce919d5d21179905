package web_test

import (
	"context"
	"net/http"
	"regexp"
	"strings"
	"testing"
	"time"

	"workbench/models"
)

var clockColon = regexp.MustCompile(`\d:\d`)

// A refused booking reads as one sentence after "Not booked:", in English
// and Chinese: the budget's refusal stacked three colons ("Not booked:
// quota exceeded: the monthly budget is used up: nothing can be launched
// …"), and a full window two ("… can be booked from …: 8 are already
// reserved then").
func TestBookingRefusalsReadAsOneSentence(t *testing.T) {
	p := newPortal(t)
	ctx := context.Background()
	lin, err := p.srv.Store.CreateUser(ctx, models.NewUser{Username: "lin", Password: "lin-password-1", Role: models.RoleUser})
	if err != nil {
		t.Fatal(err)
	}
	zero := int64(0)
	if err := p.srv.Store.SetQuota(ctx, models.ScopeUser, lin.ID, models.Limits{BudgetPerMonthMicros: &zero}, "admin"); err != nil {
		t.Fatal(err)
	}
	g, err := p.srv.Store.CreateGroup(ctx, "lab", "")
	if err != nil {
		t.Fatal(err)
	}
	if err := p.srv.Store.AddGroupMember(ctx, g.ID, lin.ID); err != nil {
		t.Fatal(err)
	}
	zh, en := p.readersSignedIn("lin", "lin-password-1")
	now := time.Now().UTC()
	next := time.Date(now.Year(), now.Month()+1, 1, 0, 0, 0, 0, time.UTC).Format("2006-01-02 15:04 UTC")
	start := now.Truncate(time.Minute) // this month (a window begun starts now)
	refusal := func(c *http.Client, group string) string {
		t.Helper()
		form := resvForm(resvH100, 1, start, start.Add(time.Hour), "")
		form.Set("group", group)
		res, body := p.postFormBody(c, "/reservations", form)
		got := strings.Join(strings.Fields(resvDoc(t, body).Find(`[data-testid=booking-error]`).Text()), " ")
		if res.StatusCode != http.StatusUnprocessableEntity {
			t.Fatalf("booking (group %q): %d %q, want 422", group, res.StatusCode, got)
		}
		return got
	}
	oneColon := func(what, got string) {
		t.Helper()
		words := clockColon.ReplaceAllString(got, "") // 14:00 is no colon of the sentence's
		if n := strings.Count(words, ":") + strings.Count(words, "："); n != 1 {
			t.Errorf("%s: %q has %d colons, want the one after \"Not booked\"", what, got, n)
		}
	}

	if got, want := refusal(en, ""), "Not booked: your monthly budget is used up, so nothing can be launched on a booking before "+next+"; book from then."; got != want {
		t.Errorf("English budget refusal:\n got %q\nwant %q", got, want)
	}
	got := refusal(zh, "")
	if !strings.HasPrefix(got, "未能预约：你本月的预算已用完，因此 ") || !strings.HasSuffix(got, " 之前无法在预约上启动任何工作台；请从那时起预约。") {
		t.Errorf("Chinese budget refusal: %q", got)
	}
	oneColon("Chinese budget refusal", got)

	// A group's booking while unused time is billed: the booker would pay.
	if err := p.srv.Store.SetReservationBillUnused(ctx, true); err != nil {
		t.Fatal(err)
	}
	want := "Not booked: your monthly budget is used up, and you would pay for the booked time the group's members leave unused; book from " + next + ", when the next month begins."
	if got := refusal(en, "lab"); got != want {
		t.Errorf("English group refusal:\n got %q\nwant %q", got, want)
	}
	got = refusal(zh, "lab")
	if !strings.HasPrefix(got, "未能预约：你本月的预算已用完，而组成员未使用的预约时间将由你支付") {
		t.Errorf("Chinese group refusal: %q", got)
	}
	oneColon("Chinese group refusal", got)
	if err := p.srv.Store.SetReservationBillUnused(ctx, false); err != nil {
		t.Fatal(err)
	}

	// The window full: an administrator holds every H100 then.
	if err := p.srv.Store.SetQuota(ctx, models.ScopeUser, lin.ID, models.Limits{}, "admin"); err != nil {
		t.Fatal(err)
	}
	later := now.Add(48 * time.Hour).Truncate(time.Hour)
	code, out := p.api("POST", "/api/v1/reservations", tokenFor(t, p, "admin", "admin"),
		`{"gpu_model":"NVIDIA H100 80GB HBM3","units":8,"starts_at":"`+later.Format(time.RFC3339)+`","ends_at":"`+later.Add(time.Hour).Format(time.RFC3339)+`"}`)
	if code != http.StatusCreated && code != http.StatusOK {
		t.Fatalf("the administrator's booking of every H100: %d %v", code, out)
	}
	for c, lang := range map[*http.Client]string{en: "English", zh: "Chinese"} {
		res, body := p.postFormBody(c, "/reservations", resvForm(resvH100, 1, later, later.Add(time.Hour), ""))
		got := strings.Join(strings.Fields(resvDoc(t, body).Find(`[data-testid=booking-error]`).Text()), " ")
		if res.StatusCode != http.StatusUnprocessableEntity || !strings.Contains(got, "8") {
			t.Fatalf("%s: booking in a full window: %d %q", lang, res.StatusCode, got)
		}
		oneColon(lang+" full-window refusal", got)
	}
}
