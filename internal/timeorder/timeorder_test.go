package timeorder

import (
	"testing"
	"time"
)

func TestMaxAndMin(t *testing.T) {
	early := time.Date(2026, 12, 7, 10, 0, 0, 0, time.UTC)
	late := early.Add(time.Nanosecond)
	if Max(early, late) != late || Max(late, early) != late || Min(early, late) != early || Min(late, early) != early {
		t.Errorf("Max/Min of %v and %v", early, late)
	}
	// The same instant in two zones: b, as the copies this replaced did.
	inZone := early.In(time.FixedZone("UTC+8", 8*3600))
	if Max(early, inZone) != inZone || Min(early, inZone) != inZone {
		t.Errorf("of one instant in two zones, want the second")
	}
}
