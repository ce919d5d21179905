package orchestrator

import "testing"

// A queue reason read by someone else loses the words meant for its owner.
func TestReasonForOthers(t *testing.T) {
	for in, want := range map[string]string{
		"4 × H100 80GB HBM3 needed; 3 free; you are next":                                                       "4 × H100 80GB HBM3 needed; 3 free",
		"1 × H100 80GB HBM3 needed; 0 free; 1 workbench ahead of you":                                           "1 × H100 80GB HBM3 needed; 0 free",
		"1 × H100 80GB HBM3 needed; 0 free; preemptible work is yielding its GPUs; 12 workbenches ahead of you": "1 × H100 80GB HBM3 needed; 0 free; preemptible work is yielding its GPUs",
		"waiting for its booking's window":                                                                      "waiting for its booking's window",
		"a; many workbenches ahead of you":                                                                      "a; many workbenches ahead of you",
	} {
		if got := ReasonForOthers(in); got != want {
			t.Errorf("ReasonForOthers(%q) = %q, want %q", in, got, want)
		}
	}
}
