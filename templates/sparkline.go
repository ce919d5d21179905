package templates

import (
	"fmt"
	"strings"
)

// SparklinePoints turns values in [0, max] into the points attribute of an
// SVG polyline w×h, oldest on the left. Fewer than two values give a flat line.
func SparklinePoints(values []float64, max float64, w, h int) string {
	if max <= 0 {
		max = 1
	}
	if len(values) < 2 {
		return fmt.Sprintf("0,%d %d,%d", h, w, h)
	}
	var b strings.Builder
	step := float64(w) / float64(len(values)-1)
	for i, v := range values {
		if v < 0 {
			v = 0
		}
		if v > max {
			v = max
		}
		y := float64(h) - v/max*float64(h)
		if i > 0 {
			b.WriteByte(' ')
		}
		fmt.Fprintf(&b, "%.1f,%.1f", float64(i)*step, y)
	}
	return b.String()
}
