package pricing

import (
	"fmt"
	"math/big"
)

// MilliJoulesPerKWh: 1 kWh = 3.6 MJ = 3.6·10⁹ mJ (NVML counts mJ).
const MilliJoulesPerKWh = 3_600_000_000

// EnergyCost prices mJ of energy at microsPerKWh, rounded to the nearest
// micro-unit (half away from zero). It is informational (SPEC §6 rule 11):
// the ledger never holds it. big.Int because a month of a large cluster at
// a high price can pass int64 in the product before the division.
func EnergyCost(mJ, microsPerKWh int64) int64 {
	n := new(big.Int).Mul(big.NewInt(mJ), big.NewInt(microsPerKWh))
	neg := n.Sign() < 0
	n.Abs(n)
	n.Add(n, big.NewInt(MilliJoulesPerKWh/2))
	n.Quo(n, big.NewInt(MilliJoulesPerKWh))
	if neg {
		n.Neg(n)
	}
	return n.Int64()
}

// FormatKWh renders mJ as kWh with 3 decimals (watt-hours), rounded.
func FormatKWh(mJ int64) string {
	neg := mJ < 0
	if neg {
		mJ = -mJ
	}
	wh := (mJ + MilliJoulesPerKWh/2000) / (MilliJoulesPerKWh / 1000)
	s := fmt.Sprintf("%d.%03d", wh/1000, wh%1000)
	if neg {
		s = "-" + s
	}
	return s
}
