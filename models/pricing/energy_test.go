package pricing

import "testing"

func TestEnergyCost(t *testing.T) {
	cases := []struct{ mJ, price, want int64 }{
		{MilliJoulesPerKWh, 150_000, 150_000},                  // 1 kWh at 0.15
		{MilliJoulesPerKWh / 2, 150_000, 75_000},               // 0.5 kWh
		{1, 1, 0},                                              // rounds to nothing
		{MilliJoulesPerKWh / 2, 1, 1},                          // half a micro rounds up
		{-MilliJoulesPerKWh, 150_000, -150_000},                // a take-back
		{4_000_000_000_000_000, 9_000_000, 10_000_000_000_000}, // product past int64
	}
	for _, c := range cases {
		if got := EnergyCost(c.mJ, c.price); got != c.want {
			t.Errorf("EnergyCost(%d, %d) = %d, want %d", c.mJ, c.price, got, c.want)
		}
	}
}

func TestFormatKWh(t *testing.T) {
	for mJ, want := range map[int64]string{0: "0.000", MilliJoulesPerKWh: "1.000", 1_800_000: "0.001", 12_345_678_901: "3.429"} {
		if got := FormatKWh(mJ); got != want {
			t.Errorf("FormatKWh(%d) = %q, want %q", mJ, got, want)
		}
	}
}
