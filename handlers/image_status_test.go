package handlers

import "testing"

func TestPullProgressText(t *testing.T) {
	for _, c := range []struct {
		done, total int64
		pct         int
		want        string
	}{
		{0, 0, 0, "starting…"},
		{120_000_000, 800_000_000, 15, "120 MB of 800 MB (15%)"},
		{4_200_000_000, 12_500_000_000, 33, "4200 MB of 12.5 GB (33%)"},
	} {
		if got := pullProgressText(c.done, c.total, c.pct); got != c.want {
			t.Errorf("pullProgressText(%d, %d) = %q, want %q", c.done, c.total, got, c.want)
		}
	}
}
