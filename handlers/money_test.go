package handlers

import (
	"context"
	"errors"
	"math"
	"testing"
	"time"

	"workbench/models"
	"workbench/templates/i18n"
)

func TestParseMajorUnitsIsExact(t *testing.T) {
	for _, tc := range []struct {
		in   string
		want int64
		ok   bool
	}{
		{"0", 0, true},
		{"12", 12_000_000, true},
		{"12.5", 12_500_000, true},
		{" 12.50 ", 12_500_000, true},
		{"0.000001", 1, true},
		{".5", 500_000, true},
		{"7.", 7_000_000, true},
		{"0.1", 100_000, true}, // 0.1 has no exact float; the digits are exact
		{"1234567.891011", 1_234_567_891_011, true},
		{"1234567.8910111", 0, false}, // seven decimals
		{"19.99", 19_990_000, true},
		{"9223372036854", 0, false}, // too large for int64 micros
		{"9223372036853.999999", 9_223_372_036_853_999_999, true},
		{"9223372036850.5", 9_223_372_036_850_500_000, true},
		{"", 0, false},
		{".", 0, false},
		{"-1", 0, false},
		{"+1", 0, false},
		{"1,5", 0, false},
		{"1e3", 0, false},
		{"1.2.3", 0, false},
		{"0.0000001", 0, false},
		{"NaN", 0, false},
	} {
		got, err := parseMajorUnits("budget", tc.in, anyAmount)
		if (err == nil) != tc.ok || (tc.ok && got != tc.want) {
			t.Errorf("parseMajorUnits(%q) = %d, %v; want %d ok=%v", tc.in, got, err, tc.want, tc.ok)
		}
	}
}

// A negative amount is told it must not be negative, not that it is not
// an amount ("-1" read "enter an amount such as 12 or 12.50").
func TestParseMajorUnitsSaysNegative(t *testing.T) {
	for in, want := range map[string]string{
		"-1":    "cannot be negative: enter 0 or more",
		" -2.5": "cannot be negative: enter 0 or more",
		"-x":    "enter an amount such as 12 or 12.50",
		"--1":   "enter an amount such as 12 or 12.50",
	} {
		_, err := parseMajorUnits("rate", in, anyAmount)
		var ve *models.ValidationError
		if !errors.As(err, &ve) || ve.Message != want {
			t.Errorf("parseMajorUnits(%q): %v, want %q", in, err, want)
		}
	}
}

func TestExactAmount(t *testing.T) {
	for in, want := range map[int64]string{
		0: "0.000000", 1: "0.000001", 1_234_567: "1.234567", -1_234_567: "-1.234567", 12_500_000: "12.500000",
		math.MaxInt64: "9223372036854.775807", math.MinInt64: "-9223372036854.775808",
	} {
		if got := exactAmount(in); got != want {
			t.Errorf("exactAmount(%d) = %q, want %q", in, got, want)
		}
	}
	for in, want := range map[int64]string{0: "0", 12_500_000: "12.5", 100_000_000: "100", 1: "0.000001"} {
		if got := plainAmount(in); got != want {
			t.Errorf("plainAmount(%d) = %q, want %q", in, got, want)
		}
		back, err := parseMajorUnits("x", plainAmount(in), anyAmount)
		if err != nil || back != in {
			t.Errorf("round trip of %d: %d %v", in, back, err)
		}
	}
}

func TestQuotaBarLevels(t *testing.T) {
	n := func(v int64) *int64 { return &v }
	for _, tc := range []struct {
		used    int64
		limit   *int64
		percent int
		level   string
		data    string
	}{
		{3, nil, 0, "ok", "unlimited"},
		{0, n(4), 0, "ok", "4"},
		{2, n(4), 50, "ok", "4"},
		{79, n(100), 79, "ok", "100"},
		{80, n(100), 80, "warn", "100"},
		{100, n(100), 100, "full", "100"},
		{150, n(100), 100, "full", "100"},
		{0, n(0), 100, "full", "0"},
	} {
		b := quotaBar("k", "K", tc.used, tc.limit, countText)
		if b.Percent != tc.percent || b.Level != tc.level || b.DataLimit != tc.data || b.Unlimited != (tc.limit == nil) {
			t.Errorf("used %d limit %v: %+v", tc.used, tc.limit, b)
		}
	}
}

func TestParseMonthAndNav(t *testing.T) {
	now := time.Date(2026, 3, 15, 12, 0, 0, 0, time.UTC)
	m, err := parseMonth("", now)
	if err != nil || !m.Equal(time.Date(2026, 3, 1, 0, 0, 0, 0, time.UTC)) {
		t.Errorf("default month %v %v", m, err)
	}
	for _, bad := range []string{"2026-13", "2026", "March", "2026-3-01"} {
		if _, err := parseMonth(bad, now); err == nil {
			t.Errorf("parseMonth(%q) accepted", bad)
		}
	}
	nav := monthNav("/usage", m, now, nil)
	if !nav.Current || nav.Next != "" || nav.Prev != "/usage?month=2026-02" || nav.Label != "March 2026" {
		t.Errorf("current month nav %+v", nav)
	}
	jan, _ := parseMonth("2026-01", now)
	nav = monthNav("/admin/billing", jan, now, map[string][]string{"group_by": {"gpu_model"}})
	if nav.Current || nav.Next != "/admin/billing?group_by=gpu_model&month=2026-02" || len(nav.Hidden) != 1 {
		t.Errorf("past month nav %+v", nav)
	}
}

func TestCSVTextDefusesFormulas(t *testing.T) {
	for in, want := range map[string]string{"=cmd()": "'=cmd()", "+1": "'+1", "@x": "'@x", "wb-1": "wb-1", "": ""} {
		if got := csvText(in); got != want {
			t.Errorf("csvText(%q) = %q", in, got)
		}
	}
}

// Pages show amounts in the portal's currency with that currency's
// decimals, through pricing.Micros (no helper of their own), in the
// reader's style: the admin pages wrote "2.42 CNY" in Chinese beside the
// user pages' "¥0.18".
func TestAmountTextUsesTheCurrencyDecimals(t *testing.T) {
	en := i18n.WithLocale(context.Background(), i18n.English)
	for cur, want := range map[string]string{"USD": "1234.57 USD", "JPY": "1235 JPY", "KWD": "1234.568 KWD"} {
		h := &Handler{cfg: Config{Currency: cur}}
		if got := h.amountText(en, 1_234_567_890); got != want {
			t.Errorf("%s: amountText = %q, want %q", cur, got, want)
		}
		if got := rateText(3_250_000, cur); cur == "USD" && got != "3.25 USD/h" {
			t.Errorf("rateText = %q", got)
		}
	}
	zh := i18n.WithLocale(context.Background(), i18n.Chinese)
	h := &Handler{cfg: Config{Currency: "CNY"}}
	if got := h.amountText(zh, 1_234_567_890); got != "¥1,234.57" {
		t.Errorf("zh amountText = %q, want ¥1,234.57", got)
	}
	if got := h.perGPUHour(zh, 12_500); got != "¥0.0125/GPU 小时" {
		t.Errorf("zh perGPUHour = %q, want ¥0.0125/GPU 小时", got)
	}
	if got := h.perGPUHour(en, 12_500); got != "0.0125 CNY/GPU-h" {
		t.Errorf("en perGPUHour = %q, want 0.0125 CNY/GPU-h", got)
	}
	if exactAmount(-1) != "-0.000001" || plainAmount(12_500_000) != "12.5" {
		t.Errorf("exact %q plain %q", exactAmount(-1), plainAmount(12_500_000))
	}
}

// A budget or a credit typed in a form has no more decimals than its
// currency: 5.005 CNY was stored and shown as 5.01, half a fen more than
// there was.
func TestParseCurrencyAmount(t *testing.T) {
	for _, c := range []struct {
		in, currency string
		want         int64
		ok           bool
	}{
		{"5.01", "CNY", 5_010_000, true},
		{"5.005", "CNY", 0, false},
		{"12", "JPY", 12_000_000, true},
		{"12.5", "JPY", 0, false},
		{"1.234", "KWD", 1_234_000, true},
		{"1.2345", "KWD", 0, false},
	} {
		got, err := parseCurrencyAmount("budget", c.in, c.currency, budgetAmount)
		if (err == nil) != c.ok || got != c.want {
			t.Errorf("%s %s: %d, %v; want %d (ok %v)", c.in, c.currency, got, err, c.want, c.ok)
		}
	}
}
