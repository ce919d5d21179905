package pricing

import (
	"errors"
	"fmt"
	"strconv"
	"strings"
)

// Micros is an amount of money in micro-units of a currency's major unit
// (1 USD = 1,000,000 micros). Every amount the portal stores, sums and
// prices is one; floats never hold money. Its methods are the only money
// formatting and parsing: pages, CSV files and the command line use them.
type Micros int64

// PerUnit is one major unit (1.00) in micros.
const PerUnit Micros = 1_000_000

// minorUnits are the decimals ISO 4217 gives currencies that do not use
// two; every other currency shows two.
var minorUnits = map[string]int{
	"JPY": 0, "KRW": 0, "VND": 0, "CLP": 0, "ISK": 0, "UGX": 0, "XAF": 0, "XOF": 0, "PYG": 0, "RWF": 0,
	"BHD": 3, "IQD": 3, "JOD": 3, "KWD": 3, "LYD": 3, "OMR": 3, "TND": 3,
}

// MinorUnits is how many decimals an amount in currency shows (2 unless
// ISO 4217 says otherwise).
func MinorUnits(currency string) int {
	if d, ok := minorUnits[strings.ToUpper(strings.TrimSpace(currency))]; ok {
		return d
	}
	return 2
}

// RateStep is the last decimal of a suggested rate (the calculator's
// internal rate, four decimals) in micro-units: a rate set from a
// suggestion is rounded to it, so that what is applied is what was shown.
const RateStep = 100

// MinorStep is the currency's smallest amount in micro-units: 10000 for a
// cent, 1000000 for a yen.
func MinorStep(currency string) int64 {
	step := int64(1)
	for range 6 - MinorUnits(currency) {
		step *= 10
	}
	return step
}

// Exact renders every micro: 1234567 → "1.234567". For CSV files and other
// machine-read text, where nothing may be rounded away.
func (m Micros) Exact() string {
	sign := ""
	u := uint64(m)
	if m < 0 {
		sign, u = "-", uint64(-(m+1))+1
	}
	return fmt.Sprintf("%s%d.%06d", sign, u/uint64(PerUnit), u%uint64(PerUnit))
}

// Plain is Exact without trailing zeros ("12.5", "100"): a stored amount
// shown back in a form field.
func (m Micros) Plain() string {
	return strings.TrimSuffix(strings.TrimRight(m.Exact(), "0"), ".")
}

// Decimal renders the amount rounded (half away from zero) to the
// currency's minor units: "12.35" for USD, "1235" for JPY, "12.346" for KWD.
func (m Micros) Decimal(currency string) string { return m.round(MinorUnits(currency)) }

// Format is Decimal followed by the currency code: "12.35 USD".
func (m Micros) Format(currency string) string {
	if currency == "" {
		return m.Decimal(currency)
	}
	return m.Decimal(currency) + " " + currency
}

// Rate renders a price per unit with two to six decimals, as many as it
// has (rates such as 0.0125 per core-hour need more than an amount's two):
// 3250000 → "3.25", 12500 → "0.0125", 2500001 → "2.500001". It is exact:
// a rate of 2.500001 shown as "2.50" let nobody rebuild a statement line
// from its rate and time.
func (m Micros) Rate() string {
	s := m.round(6)
	for strings.HasSuffix(s, "0") && s[len(s)-3] != '.' {
		s = s[:len(s)-1]
	}
	return s
}

// round renders m with d decimals (0 ≤ d ≤ 6), half away from zero.
func (m Micros) round(d int) string {
	neg := m < 0
	u := uint64(m)
	if neg {
		u = uint64(-(m + 1)) + 1
	}
	step := uint64(1)
	for range 6 - d {
		step *= 10
	}
	q := (u + step/2) / step // in units of 10^-d
	scale := uint64(1)
	for range d {
		scale *= 10
	}
	s := strconv.FormatUint(q/scale, 10)
	if d > 0 {
		s += fmt.Sprintf(".%0*d", d, q%scale)
	}
	if neg && q != 0 {
		s = "-" + s
	}
	return s
}

// Errors of ParseMicros; callers word them for their field.
var (
	ErrAmountSyntax    = errors.New("not an amount such as 12 or 12.50")
	ErrAmountPrecision = errors.New("more than 6 decimals (one micro-unit)")
	ErrAmountRange     = errors.New("amount too large")
)

// maxWhole keeps whole·10^6 + fraction inside int64.
const maxWhole = (1<<63-1)/int64(PerUnit) - 1

// ParseMicros reads a non-negative decimal in major units ("12", "12.5",
// ".5", "0.000001") exactly: the digits are taken as written, never through
// a float; more than six decimals is refused, not rounded.
func ParseMicros(s string) (Micros, error) {
	s = strings.TrimSpace(s)
	whole, frac, _ := strings.Cut(s, ".")
	if whole == "" && frac == "" {
		return 0, ErrAmountSyntax
	}
	for _, r := range whole + frac {
		if r < '0' || r > '9' {
			return 0, ErrAmountSyntax
		}
	}
	if len(frac) > 6 {
		return 0, ErrAmountPrecision
	}
	if whole == "" {
		whole = "0"
	}
	w, err := strconv.ParseInt(whole, 10, 64)
	if err != nil || w > maxWhole {
		return 0, ErrAmountRange
	}
	var f int64
	if frac != "" {
		f, _ = strconv.ParseInt(frac+strings.Repeat("0", 6-len(frac)), 10, 64)
	}
	return Micros(w)*PerUnit + Micros(f), nil
}
