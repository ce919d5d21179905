package pricing

import (
	"reflect"
	"testing"
	"time"
)

func TestDiscountedFollowsBothSchedules(t *testing.T) {
	t0 := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	gpu := Schedule{{t0, 3_000_000}, {t0.Add(2 * time.Hour), 4_000_001}}
	disc := Schedule{{t0.Add(-time.Hour), 70}, {t0.Add(time.Hour), 50}}
	got := Discounted(gpu, disc)
	want := Schedule{{t0, 900_000}, {t0.Add(time.Hour), 1_500_000}, {t0.Add(2 * time.Hour), 2_000_000}} // 2_000_000.5 rounds down
	if !reflect.DeepEqual(got, want) {
		t.Fatalf("got %v, want %v", got, want)
	}
	if got := Discounted(gpu, nil); !reflect.DeepEqual(got, Schedule{{t0, 3_000_000}, {t0.Add(2 * time.Hour), 4_000_001}}) {
		t.Fatalf("no discount: %v", got)
	}
}
