package orchestrator

import (
	"fmt"
	"time"
)

// durationText writes a duration as a reason shows it to people: "45 s",
// "3 min", "3 min 20 s", "1 h 30 min", "24 h". Go's own "3m0s" read as
// code, in the Chinese pages too (the reason's text is kept as written).
// Seconds are dropped from an hour or more.
func durationText(d time.Duration) string {
	d = d.Round(time.Second)
	if d < time.Minute {
		return fmt.Sprintf("%d s", int64(d/time.Second))
	}
	h, m, s := int64(d/time.Hour), int64(d%time.Hour/time.Minute), int64(d%time.Minute/time.Second)
	switch {
	case h > 0 && m > 0:
		return fmt.Sprintf("%d h %d min", h, m)
	case h > 0:
		return fmt.Sprintf("%d h", h)
	case s > 0:
		return fmt.Sprintf("%d min %d s", m, s)
	}
	return fmt.Sprintf("%d min", m)
}
