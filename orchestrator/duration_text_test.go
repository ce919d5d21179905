package orchestrator

import (
	"testing"
	"time"
)

func TestDurationTextReadsAsPeopleWriteIt(t *testing.T) {
	for d, want := range map[time.Duration]string{
		45 * time.Second:                     "45 s",
		3 * time.Minute:                      "3 min",
		200 * time.Second:                    "3 min 20 s",
		90 * time.Minute:                     "1 h 30 min",
		24 * time.Hour:                       "24 h",
		time.Hour + 30*time.Second:           "1 h",
		2*time.Minute + 400*time.Millisecond: "2 min",
	} {
		if got := durationText(d); got != want {
			t.Errorf("durationText(%v) = %q, want %q", d, got, want)
		}
	}
}
