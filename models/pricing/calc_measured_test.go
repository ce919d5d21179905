package pricing

import (
	"errors"
	"testing"
)

// sums builds MeasuredSums from per-minute (utilisation %, watts) pairs.
func sums(points ...[2]float64) MeasuredSums {
	var s MeasuredSums
	for _, p := range points {
		s.Minutes++
		s.SumU += p[0]
		s.SumP += p[1]
		s.SumUU += p[0] * p[0]
		s.SumUP += p[0] * p[1]
		s.UtilSum += int64(p[0])
		s.UtilReads++
	}
	return s
}

func TestFitMeasured(t *testing.T) {
	// Power = 70 W + 6 W per % (70 W idle, 670 W flat out); mean util 25%.
	m, err := FitMeasured(sums([2]float64{0, 70}, [2]float64{0, 70}, [2]float64{50, 370}, [2]float64{50, 370}))
	if err != nil {
		t.Fatal(err)
	}
	if m.IdleWatts != 70 || m.ActiveWatts != 670 || m.MeanWatts != 220 || m.UtilPermille != 250 {
		t.Fatalf("fit %+v, want idle 70, active 670, mean 220, 25%%", m)
	}
	var in TCOInput
	m.Apply(&in)
	if in.GPUIdleWatts.String() != "70/1" || in.GPUActiveWatts.String() != "670/1" || in.Utilization.String() != "1/4" {
		t.Errorf("applied %v %v %v", in.GPUIdleWatts, in.GPUActiveWatts, in.Utilization)
	}
	// One load level: no line, both are the mean.
	m, _ = FitMeasured(sums([2]float64{40, 300}, [2]float64{40, 310}))
	if m.IdleWatts != 305 || m.ActiveWatts != 305 || m.UtilPermille != 400 {
		t.Errorf("flat fit %+v", m)
	}
	// A fit below 0 W idle is clamped.
	m, _ = FitMeasured(sums([2]float64{10, 10}, [2]float64{90, 700}))
	if m.IdleWatts != 0 || m.ActiveWatts < m.IdleWatts {
		t.Errorf("clamped fit %+v", m)
	}
	if _, err := FitMeasured(MeasuredSums{}); !errors.Is(err, ErrNoMeasurements) {
		t.Errorf("no data: %v", err)
	}
	if _, err := FitMeasured(sums([2]float64{0, 60})); err == nil {
		t.Error("a 0% utilisation was accepted (no cost per GPU-hour exists)")
	}
}
