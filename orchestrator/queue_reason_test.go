package orchestrator

import (
	"testing"
	"time"
)

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

// Another user reads a wait on the owner's quota or booking without the
// owner's limits and holdings, and without "your" (the /gpus queue showed
// "waiting for your other workbenches to stop: quota exceeded: at most 2
// GPUs at once (you hold 2, this asks 2)" to everyone).
func TestReasonForPublic(t *testing.T) {
	for in, want := range map[string]string{
		"waiting for your other workbenches to stop: quota exceeded: at most 2 GPUs at once (you hold 2, this asks 2)": "waiting for its owner's other workbenches to stop (a quota limit)",
		"waiting for your reservation #7, which opens at 2026-12-06 09:00 UTC":                                         "waiting for its owner's reservation to open",
		"1 × H100 80GB HBM3 needed; 0 free; you are next":                                                              "1 × H100 80GB HBM3 needed; 0 free",
	} {
		if got := ReasonForPublic(in); got != want {
			t.Errorf("ReasonForPublic(%q) = %q, want %q", in, got, want)
		}
	}
}

// A booking's opening in the queue's reason is to the minute, as the
// booking pages and refusals write it ("10:00:00" read as another format
// beside "10:00"); seconds only when the window has some.
func TestOpensAtIsToTheMinute(t *testing.T) {
	for in, want := range map[time.Time]string{
		time.Date(2026, 12, 7, 10, 0, 0, 0, time.UTC):  "2026-12-07 10:00",
		time.Date(2026, 12, 7, 10, 0, 30, 0, time.UTC): "2026-12-07 10:00:30",
	} {
		if got := opensAt(in); got != want {
			t.Errorf("opensAt(%s) = %q, want %q", in, got, want)
		}
	}
}
