package templates_test

import (
	"context"
	"errors"
	"io"
	"log/slog"
	"strings"
	"testing"
	"time"

	"workbench/models"
	"workbench/models/pricing"
	"workbench/templates"
	"workbench/templates/i18n"
)

// The money inside a refusal reads as the page's own amounts do: a Chinese
// /usage page wrote its spend "$0.08" and, beside it, the refusal "超出配额：
// 本月预算剩余的 8.94 USD …". The refusals here are the models' own (a
// real SQLite store, the launch check and the booking check); the amounts
// in them keep their rounding (what is left down, what is owed up, a
// sliver left under a cent to the micro-unit), and the English text — the API's
// message — is unchanged.
func TestMoneyInsideARefusalReadsAsThePagesMoney(t *testing.T) {
	ctx := context.Background()
	s, err := models.Open(ctx, t.TempDir(), slog.New(slog.NewTextHandler(io.Discard, nil)))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { s.Close() })
	u, err := s.CreateUser(ctx, models.NewUser{Username: "lin", Password: "lin-password-1"})
	if err != nil {
		t.Fatal(err)
	}
	img := models.Image{Name: "Test", Image: "quay.io/jupyter/base-notebook:latest",
		StartCommand: "start-notebook.py --port={port} --base-url={base_url} --token={token}", Enabled: true}
	if err := s.CreateImage(ctx, &img); err != nil {
		t.Fatal(err)
	}
	fl := &models.Flavor{Name: "cpu", CPUMilli: 2000, MemoryMiB: 4096, Enabled: true}
	if err := s.CreateFlavor(ctx, fl); err != nil {
		t.Fatal(err)
	}
	budget := func(micros int64) {
		t.Helper()
		if err := s.SetQuota(ctx, models.ScopeUser, u.ID, models.Limits{BudgetPerMonthMicros: &micros}, "admin"); err != nil {
			t.Fatal(err)
		}
	}
	n := 0
	launch := func(ask models.LaunchAsk, spent int64) string {
		t.Helper()
		n++
		ask.UserID, ask.Image, ask.Flavor = u.ID, img.Name, fl.Name
		wb := &models.Workbench{Name: "wb" + string(rune('a'+n)), OwnerID: u.ID, ImageID: img.ID, FlavorID: fl.ID, Token: "t"}
		err := s.CreateWorkbench(ctx, wb, models.GPUNeed{}, models.CheckLaunchQuota(ask, models.MonthUsage{AmountMicros: spent}))
		var qe *models.QuotaError
		if !errors.As(err, &qe) {
			t.Fatalf("launch %+v with %d spent: %v, want a quota refusal", ask, spent, err)
		}
		return qe.Message
	}

	en := context.Background()
	zh := i18n.WithLocale(en, i18n.Chinese)
	type amount struct {
		micros   int64  // as the page's Money is given it
		currency string // ISO code
		english  string // as the English refusal writes it
	}
	check := func(what, msg string, amounts ...amount) {
		t.Helper()
		for _, show := range []func(context.Context, string) string{i18n.Reason, i18n.ReasonClause} {
			got := show(zh, msg)
			for _, a := range amounts {
				if want := templates.Money(zh, a.micros, a.currency); !strings.Contains(got, want) {
					t.Errorf("%s in Chinese:\n%q\nlacks %q (the page's Money)", what, got, want)
				}
			}
			if strings.Contains(got, " USD") || strings.Contains(got, " CNY") {
				t.Errorf("%s in Chinese still writes a currency code: %q", what, got)
			}
		}
		if got := i18n.Reason(en, msg); got != msg {
			t.Errorf("%s in English: %q, want it as the models wrote it, %q", what, got, msg)
		}
		for _, a := range amounts {
			if !strings.Contains(msg, a.english) {
				t.Errorf("%s: the refusal %q lacks %q", what, msg, a.english)
			}
			if got := i18n.ReasonClause(en, msg); !strings.Contains(got, a.english) {
				t.Errorf("%s after a page's words in English: %q lacks %q", what, got, a.english)
			}
		}
	}

	// Thousands grouped, the symbol first; 1,234.574 left rounds down, a
	// minimum of 1,500.001 rounds up.
	budget(2_000_000_000)
	msg := launch(models.LaunchAsk{Currency: "CNY", MinChargeMicros: 1_500_001_000, MinChargeSecs: 60}, 765_426_000)
	check("minimum charge over what is left", msg,
		amount{1_234_570_000, "CNY", "1234.57 CNY"}, amount{1_500_010_000, "CNY", "1500.01 CNY"})

	// Something left under a cent: the budget is used up, the sliver
	// written to the micro-unit as the banner writes what is left
	// (MoneyAtMost): it read "less than 0.01 USD" here and "< $0.01" there.
	budget(1_000_000)
	msg = launch(models.LaunchAsk{Currency: "USD", MinChargeMicros: 20_000, MinChargeSecs: 60}, 995_000)
	check("under a cent left", msg, amount{20_000, "USD", "0.02 USD"})
	if !strings.Contains(msg, "only 0.005 USD is left") {
		t.Errorf("under a cent left: %q, want the 0.005 USD left written exactly", msg)
	}
	if got, want := i18n.Reason(zh, msg), "仅剩 "+templates.MoneyAtMost(zh, 5_000, "USD"); !strings.Contains(got, want) {
		t.Errorf("under a cent left in Chinese: %q lacks %q (the banner's figure)", got, want)
	}

	// Bookings' unused time takes all that is left.
	budget(8_940_000)
	msg = launch(models.LaunchAsk{Currency: "USD", SetAsideMicros: 8_940_000, MinChargeMicros: 10_000, MinChargeSecs: 60}, 0)
	check("set aside for bookings", msg, amount{8_940_000, "USD", "8.94 USD"})

	// … or leaves too little for the minimum charge.
	budget(1_234_560_000)
	msg = launch(models.LaunchAsk{Currency: "USD", SetAsideMicros: 1_000_000_000, MinChargeMicros: 300_000_000, MinChargeSecs: 60}, 0)
	check("set aside, the rest short of the minimum", msg,
		amount{1_000_000_000, "USD", "1000.00 USD"}, amount{1_234_560_000, "USD", "1234.56 USD"}, amount{300_000_000, "USD", "300.00 USD"})

	// A booking whose unused time would cost more than the budget has left.
	budget(5_000_000)
	const h100 = "NVIDIA H100 80GB HBM3"
	start := time.Now().UTC().Add(2 * time.Hour).Truncate(time.Hour)
	if start.Month() != start.Add(3*time.Hour).Month() {
		start = start.Add(6 * time.Hour) // one month's budget only
	}
	r := &models.Reservation{UserID: u.ID, GPUModel: h100, Units: 1, StartsAt: start, EndsAt: start.Add(3 * time.Hour)}
	bb := &models.BookingBudget{Currency: "USD", Schedules: map[string]pricing.Schedule{
		pricing.ScheduleKey(pricing.GPU, h100): {{Effective: time.Date(2020, 1, 1, 0, 0, 0, 0, time.UTC), Micros: 3_333_334}},
	}}
	var qe *models.QuotaError
	if err := s.CreateReservation(ctx, r, 8, false, "", bb); !errors.As(err, &qe) {
		t.Fatalf("booking 3 h at 3.333334 an hour on a budget of 5.00: %v, want a quota refusal", err)
	}
	check("a booking's unused time over the budget", qe.Message,
		amount{10_010_000, "USD", "10.01 USD"}, amount{5_000_000, "USD", "5.00 USD"})
}
