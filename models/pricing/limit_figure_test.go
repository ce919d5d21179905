package pricing

import "testing"

// A figure compared against a limit is never "< 0.01": under a cent it is
// written to the micro-unit; otherwise rounded down (AtMost) or up
// (AtLeast) in the currency's decimals.
func TestLimitFigures(t *testing.T) {
	for _, c := range []struct {
		m               Micros
		cur             string
		atMost, atLeast string
	}{
		{0, "USD", "0.00", "0.00"},
		{3_000, "USD", "0.003", "0.003"},
		{9_999, "USD", "0.009999", "0.009999"},
		{10_000, "USD", "0.01", "0.01"},
		{996_000, "USD", "0.99", "1.00"},
		{1_234_567, "USD", "1.23", "1.24"},
		{-3_000, "USD", "-0.003", "-0.003"},
		{-1_234_567, "USD", "-1.24", "-1.23"},
		{400_000, "JPY", "0.4", "0.4"},
		{1_400_000, "JPY", "1", "2"},
		{1_234_567, "KWD", "1.234", "1.235"},
	} {
		if got := c.m.AtMost(c.cur); got != c.atMost {
			t.Errorf("%d %s AtMost = %q, want %q", c.m, c.cur, got, c.atMost)
		}
		if got := c.m.AtLeast(c.cur); got != c.atLeast {
			t.Errorf("%d %s AtLeast = %q, want %q", c.m, c.cur, got, c.atLeast)
		}
	}
}
