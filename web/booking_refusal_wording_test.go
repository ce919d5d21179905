package web_test

import (
	"context"
	"fmt"
	"net/http"
	"net/url"
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

// isoDate is a date as the models write it (2026-12, 2026-12-14).
var isoDate = regexp.MustCompile(`\d{4}-\d{2}`)

// A refused booking's dates are worded for its reader, as the calculator
// and the tables word them: in Chinese, "2026年12月14日" for the week a cap
// counts, "2026年12月" for the month a budget counts and the time the next
// month begins with the reader's zone beside UTC; before, a Chinese page
// said "2026-12-14", "2026-12" and "2027-01-01 00:00 UTC". In English the
// month is named as the statements name it. The API keeps the UTC text.
func TestBookingRefusalDatesInTheReadersLanguageAndZone(t *testing.T) {
	p := newPortal(t)
	ctx := context.Background()
	lin, err := p.srv.Store.CreateUser(ctx, models.NewUser{Username: "lin", Password: "lin-password-1", Role: models.RoleUser})
	if err != nil {
		t.Fatal(err)
	}
	zh, en := p.readersSignedIn("lin", "lin-password-1")
	if res := p.postForm(en, "/settings/time-zone", url.Values{"time_zone": {"Asia/Shanghai"}}); res.StatusCode >= 400 {
		t.Fatalf("time zone: %d", res.StatusCode)
	}
	rootToken := tokenFor(t, p, "admin", "admin")
	refusal := func(c *http.Client, units int, start time.Time) string {
		t.Helper()
		res, body := p.postFormBody(c, "/reservations", resvForm(resvH100, units, start, start.Add(time.Hour), ""))
		got := strings.Join(strings.Fields(resvDoc(t, body).Find(`[data-testid=booking-error]`).Text()), " ")
		if res.StatusCode != http.StatusUnprocessableEntity {
			t.Fatalf("booking %d at %s: %d %q, want 422", units, start, res.StatusCode, got)
		}
		return got
	}
	chinese := func(what, got, want string) {
		t.Helper()
		if !strings.Contains(got, want) || isoDate.MatchString(got) {
			t.Errorf("Chinese %s: %q, want %q and no ISO date", what, got, want)
		}
	}
	now := time.Now().UTC()
	later := now.Add(48 * time.Hour).Truncate(time.Hour)

	// The weekly cap names its week.
	if code, out := p.api("PUT", "/api/v1/admin/reservation-caps/user/lin", rootToken, `{"unit_hours_per_week": 1}`); code != http.StatusNoContent {
		t.Fatalf("lin's cap: %d %v", code, out)
	}
	got := refusal(zh, 2, later)
	if !strings.Contains(got, "单元小时") {
		t.Fatalf("not the cap's refusal: %q", got)
	}
	chinese("cap refusal", got, "年")
	if code, out := p.api("PUT", "/api/v1/admin/reservation-caps/user/lin", rootToken, `{"unit_hours_per_week": 1000}`); code != http.StatusNoContent {
		t.Fatalf("lin's cap: %d %v", code, out)
	}

	// The budget names the month its unused time would be billed in.
	one := int64(1_000_000)
	if err := p.srv.Store.SetQuota(ctx, models.ScopeUser, lin.ID, models.Limits{BudgetPerMonthMicros: &one}, "admin"); err != nil {
		t.Fatal(err)
	}
	if err := p.srv.Store.SetReservationBillUnused(ctx, true); err != nil {
		t.Fatal(err)
	}
	chinese("budget refusal", refusal(zh, 2, later), fmt.Sprintf("将在 %d年%d月 ", later.Year(), int(later.Month())))
	if got, want := refusal(en, 2, later), " in "+later.Format("January 2006")+" (unused booked time is billed)"; !strings.Contains(got, want) {
		t.Errorf("English budget refusal: %q, want %q", got, want)
	}

	// The budget used up: the time the next month begins, in the reader's
	// zone beside UTC.
	zero := int64(0)
	if err := p.srv.Store.SetQuota(ctx, models.ScopeUser, lin.ID, models.Limits{BudgetPerMonthMicros: &zero}, "admin"); err != nil {
		t.Fatal(err)
	}
	next := time.Date(now.Year(), now.Month()+1, 1, 0, 0, 0, 0, time.UTC)
	chinese("used-up refusal", refusal(zh, 1, now.Truncate(time.Minute)),
		fmt.Sprintf("因此 %d年%d月%d日 00:00 UTC（08:00 UTC+8）之前", next.Year(), int(next.Month()), next.Day())) // the same day in Shanghai
	if got, want := refusal(en, 1, now.Truncate(time.Minute)), next.Format("2006-01-02 15:04 UTC")+" (08:00 UTC+8); book from then."; !strings.Contains(got, want) {
		t.Errorf("English used-up refusal: %q, want %q", got, want)
	}
	// The API gives the stored text: English, UTC.
	code, out := p.api("POST", "/api/v1/reservations", tokenFor(t, p, "lin", "user"), fmt.Sprintf(`{"gpu_model": "NVIDIA H100 80GB HBM3", "units": 1, "starts_at": %q, "ends_at": %q}`,
		now.Format(time.RFC3339), now.Add(time.Hour).Format(time.RFC3339)))
	if code != http.StatusUnprocessableEntity || !strings.Contains(errMessage(out), "before "+next.Format("2006-01-02 15:04 UTC")+"; book from then") {
		t.Errorf("API: %d %v", code, out)
	}
}
