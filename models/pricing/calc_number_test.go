package pricing

import "testing"

func TestParseScaled(t *testing.T) {
	for in, want := range map[string]int64{"1.5": 5400, "0.0667": 240, "2": 7200, "0": 0, "-1": -3600, ".25": 900} {
		if got, err := ParseScaled(in, 3600); err != nil || got != want {
			t.Errorf("ParseScaled(%q) = %d, %v; want %d", in, got, err, want)
		}
	}
	for _, in := range []string{"", "1/3", "abc", "1,5", "Inf", "1e30"} {
		if got, err := ParseScaled(in, 3600); err == nil {
			t.Errorf("ParseScaled(%q) = %d; want an error", in, got)
		}
	}
}
