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

// A spend is written as the statement writes it, except that one still
// under its limit never reads as reaching it.
func TestSpentOf(t *testing.T) {
	limit := func(v int64) *int64 { return &v }
	for _, c := range []struct {
		m     Micros
		limit *int64
		cur   string
		want  string
	}{
		{205_000, nil, "USD", "0.21"},                // as the statement line
		{205_000, limit(1_000_000), "USD", "0.21"},   // far from the limit: the same
		{996_000, limit(1_000_000), "USD", "0.99"},   // would read as the limit reached
		{1_000_000, limit(1_000_000), "USD", "1.00"}, // reached
		{1_004_000, limit(1_000_000), "USD", "1.00"}, // over, rounded as the statement
		{9_000, limit(10_000), "USD", "0.009"},       // a sliver: exact
		{0, limit(10_000), "USD", "0.00"},
		{1_600_000, limit(2_000_000), "JPY", "1"}, // 2 would read as reached
		{1_600_000, nil, "JPY", "2"},
	} {
		if got := c.m.SpentOf(c.limit, c.cur); got != c.want {
			t.Errorf("%d %s of %v: SpentOf = %q, want %q", c.m, c.cur, c.limit, got, c.want)
		}
	}
}
