package pricing

import (
	"errors"
	"math"
	"testing"
)

func TestMicrosFormatsPerCurrency(t *testing.T) {
	for _, c := range []struct {
		m        Micros
		currency string
		want     string
	}{
		{12_345_678, "USD", "12.35 USD"},
		{12_344_999, "EUR", "12.34 EUR"},
		{5_000, "USD", "0.01 USD"}, // half a cent rounds away from zero
		{-5_000, "USD", "-0.01 USD"},
		{-4_999, "USD", "0.00 USD"}, // no "-0.00"
		{1_234_567_890, "JPY", "1235 JPY"},
		{499_999, "JPY", "0 JPY"},
		{12_345_678, "KWD", "12.346 KWD"},
		{12_345_678, "kwd", "12.346 kwd"},
		{0, "CNY", "0.00 CNY"},
		{7_000_000, "", "7.00"},
		{math.MaxInt64, "USD", "9223372036854.78 USD"},
		{math.MinInt64, "USD", "-9223372036854.78 USD"},
	} {
		if got := c.m.Format(c.currency); got != c.want {
			t.Errorf("Micros(%d).Format(%q) = %q, want %q", c.m, c.currency, got, c.want)
		}
	}
}

func TestMicrosExactPlainRate(t *testing.T) {
	for _, c := range []struct {
		m                  Micros
		exact, plain, rate string
	}{
		{1_234_567, "1.234567", "1.234567", "1.234567"}, // a rate is shown exact
		{12_500_000, "12.500000", "12.5", "12.50"},
		{100_000_000, "100.000000", "100", "100.00"},
		{12_500, "0.012500", "0.0125", "0.0125"},
		{1, "0.000001", "0.000001", "0.000001"},
		{-1_500_000, "-1.500000", "-1.5", "-1.50"},
		{math.MinInt64, "-9223372036854.775808", "-9223372036854.775808", "-9223372036854.775808"},
	} {
		if got := c.m.Exact(); got != c.exact {
			t.Errorf("Micros(%d).Exact() = %q, want %q", c.m, got, c.exact)
		}
		if got := c.m.Plain(); got != c.plain {
			t.Errorf("Micros(%d).Plain() = %q, want %q", c.m, got, c.plain)
		}
		if got := c.m.Rate(); got != c.rate {
			t.Errorf("Micros(%d).Rate() = %q, want %q", c.m, got, c.rate)
		}
	}
	// The old helpers are the type's methods.
	if Format(12_345_678) != "12.35" || FormatRate(12_500) != "0.0125" {
		t.Errorf("Format/FormatRate disagree with Micros: %q %q", Format(12_345_678), FormatRate(12_500))
	}
}

func TestParseMicrosIsExact(t *testing.T) {
	good := map[string]Micros{"12": 12_000_000, "12.5": 12_500_000, ".5": 500_000, "0.000001": 1, " 3.25 ": 3_250_000, "0": 0}
	for s, want := range good {
		if got, err := ParseMicros(s); err != nil || got != want {
			t.Errorf("ParseMicros(%q) = %d, %v; want %d", s, got, err, want)
		}
	}
	bad := map[string]error{"": ErrAmountSyntax, ".": ErrAmountSyntax, "-1": ErrAmountSyntax, "1e3": ErrAmountSyntax,
		"1,5": ErrAmountSyntax, "0.0000001": ErrAmountPrecision, "99999999999999999999": ErrAmountRange}
	for s, want := range bad {
		if _, err := ParseMicros(s); !errors.Is(err, want) {
			t.Errorf("ParseMicros(%q): %v, want %v", s, err, want)
		}
	}
	// Round trip: what Plain writes, ParseMicros reads back.
	for _, m := range []Micros{0, 1, 999_999, 12_500_000, 123_456_789_012} {
		if got, err := ParseMicros(m.Plain()); err != nil || got != m {
			t.Errorf("round trip of %d through %q: %d, %v", m, m.Plain(), got, err)
		}
	}
}
