package pricing

import (
	"errors"
	"fmt"
	"math"
	"math/big"
)

// MeasuredDays is how far back "use measured" looks.
const MeasuredDays = 30

// MeasuredSums are the per-minute telemetry sums "use measured" fits
// (models.MeasuredGPUStats): minutes where utilisation u (%) and power p
// (W) were both read, and every readable utilisation sample.
type MeasuredSums struct {
	Minutes            int64
	SumU, SumP         float64
	SumUU, SumUP       float64
	UtilSum, UtilReads int64
}

// Measured replaces the TCO's guessed power and utilisation with what the
// GPUs did: a least-squares line of power against utilisation gives the
// idle watts (at 0 %) and active watts (at 100 %), and the utilisation is
// the utilisation-weighted busy share (the mean SM utilisation) — the same
// "busy" the utilisation dashboard reports.
type Measured struct {
	Minutes     int64
	IdleWatts   int64
	ActiveWatts int64
	MeanWatts   int64
	// UtilPermille is the mean utilisation in thousandths (0–1000).
	UtilPermille int64
}

// ErrNoMeasurements: nothing was read in the period.
var ErrNoMeasurements = errors.New("no GPU telemetry was recorded for this model in the last 30 days")

// FitMeasured works out Measured from the sums. With a single utilisation
// level (a GPU that never changed load) no line can be fitted: idle and
// active are both the mean power. The fit is clamped to what a TCO
// accepts: idle ≥ 0 and idle ≤ active.
func FitMeasured(s MeasuredSums) (Measured, error) {
	if s.Minutes <= 0 || s.UtilReads <= 0 {
		return Measured{}, ErrNoMeasurements
	}
	n := float64(s.Minutes)
	meanP := s.SumP / n
	idle, active := meanP, meanP
	if den := n*s.SumUU - s.SumU*s.SumU; den > 1e-9*n*n {
		slope := (n*s.SumUP - s.SumU*s.SumP) / den // W per %
		idle = (s.SumP - slope*s.SumU) / n
		active = idle + 100*slope
	}
	idle = math.Max(idle, 0)
	active = math.Max(active, idle)
	m := Measured{Minutes: s.Minutes, IdleWatts: int64(math.Round(idle)), ActiveWatts: int64(math.Round(active)),
		MeanWatts: int64(math.Round(meanP)), UtilPermille: (s.UtilSum*10 + s.UtilReads/2) / s.UtilReads}
	if m.UtilPermille <= 0 {
		return m, fmt.Errorf("the measured utilisation is 0%% (%d GPU-minutes): a cost per GPU-hour needs some use", s.Minutes)
	}
	return m, nil
}

// Apply puts the measured figures into a TCO input.
func (m Measured) Apply(in *TCOInput) {
	in.GPUIdleWatts = ratInt(m.IdleWatts)
	in.GPUActiveWatts = ratInt(m.ActiveWatts)
	in.Utilization = new(big.Rat).SetFrac64(m.UtilPermille, 1000)
}

// Note says what was measured, for the page and the API.
func (m Measured) Note() string {
	return fmt.Sprintf("Measured over the last %d days (%d GPU-minutes): %d W on average; fitted %d W idle, %d W at full load; utilisation %d.%d%%.",
		MeasuredDays, m.Minutes, m.MeanWatts, m.IdleWatts, m.ActiveWatts, m.UtilPermille/10, m.UtilPermille%10)
}
