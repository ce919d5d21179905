package handlers

import "testing"

// TestCalcPct: a share prints with one decimal, without a trailing ".0";
// a share under 1 % keeps two significant digits (0.0001 printed "0%").
func TestCalcPct(t *testing.T) {
	for f, want := range map[float64]string{
		0.5: "50%", 0.455: "45.5%", 1: "100%", 0: "0%",
		0.0001: "0.01%", 0.000012345: "0.0012%", 0.0005: "0.05%", 0.005: "0.5%", 0.00123: "0.12%",
	} {
		if got := calcPct(f); got != want {
			t.Errorf("calcPct(%v) = %q, want %q", f, got, want)
		}
	}
}
