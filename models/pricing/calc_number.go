package pricing

import (
	"errors"
	"math/big"
	"strings"
)

// Numbers from forms and JSON are parsed into exact rationals: every
// calculator input is a decimal a person typed, and big.Rat keeps the TCO
// formulas exact (no NaN, no Inf, no binary rounding) until the one explicit
// rounding to micro-units at the end.

// maxNumberLen bounds an input number's text; nothing sensible is longer.
const maxNumberLen = 40

// maxExponent bounds the exponent of "2.5e5"-style numbers: big.Rat would
// happily build a number with a billion digits from "1e1000000000".
const maxExponent = 30

var errNotNumber = errors.New("must be a plain number such as 12 or 0.35")

// parseNumber parses an optionally signed decimal with an optional exponent
// ("12", "-0.5", ".25", "2.5e3"). It refuses everything else big.Rat would
// take (fractions "1/3", hex, "Inf", "NaN", thousands separators) and any
// text over maxNumberLen.
func parseNumber(s string) (*big.Rat, error) {
	s = strings.TrimSpace(s)
	if s == "" || len(s) > maxNumberLen {
		return nil, errNotNumber
	}
	i := 0
	neg := false
	if s[i] == '+' || s[i] == '-' {
		neg = s[i] == '-'
		i++
	}
	var digits strings.Builder
	fracDigits := 0
	seenDot, seenDigit := false, false
	for ; i < len(s); i++ {
		c := s[i]
		switch {
		case c >= '0' && c <= '9':
			digits.WriteByte(c)
			seenDigit = true
			if seenDot {
				fracDigits++
			}
		case c == '.' && !seenDot:
			seenDot = true
		default:
			goto exponent
		}
	}
exponent:
	if !seenDigit {
		return nil, errNotNumber
	}
	exp := 0
	if i < len(s) {
		if s[i] != 'e' && s[i] != 'E' {
			return nil, errNotNumber
		}
		i++
		eneg := false
		if i < len(s) && (s[i] == '+' || s[i] == '-') {
			eneg = s[i] == '-'
			i++
		}
		if i == len(s) {
			return nil, errNotNumber
		}
		for ; i < len(s); i++ {
			c := s[i]
			if c < '0' || c > '9' {
				return nil, errNotNumber
			}
			exp = exp*10 + int(c-'0')
			if exp > maxExponent {
				return nil, errors.New("is out of range")
			}
		}
		if eneg {
			exp = -exp
		}
	}
	n, ok := new(big.Int).SetString(digits.String(), 10)
	if !ok {
		return nil, errNotNumber
	}
	if neg {
		n.Neg(n)
	}
	r := new(big.Rat).SetInt(n)
	shift := exp - fracDigits
	p := new(big.Int).Exp(big.NewInt(10), big.NewInt(int64(abs(shift))), nil)
	if shift >= 0 {
		r.Mul(r, new(big.Rat).SetInt(p))
	} else {
		r.Quo(r, new(big.Rat).SetInt(p))
	}
	return r, nil
}

func abs(n int) int {
	if n < 0 {
		return -n
	}
	return n
}

// rat builds an exact rational from a decimal literal known to be valid (defaults, constants).
func rat(s string) *big.Rat {
	r, err := parseNumber(s)
	if err != nil {
		panic("calculator: bad constant " + s)
	}
	return r
}

func ratInt(n int64) *big.Rat { return new(big.Rat).SetInt64(n) }

func add(a, b *big.Rat) *big.Rat { return new(big.Rat).Add(a, b) }
func sub(a, b *big.Rat) *big.Rat { return new(big.Rat).Sub(a, b) }
func mul(a, b *big.Rat) *big.Rat { return new(big.Rat).Mul(a, b) }

// quo divides; callers guarantee b ≠ 0 (validated inputs), and a zero
// divisor yields zero rather than a panic should that ever be violated.
func quo(a, b *big.Rat) *big.Rat {
	if b.Sign() == 0 {
		return new(big.Rat)
	}
	return new(big.Rat).Quo(a, b)
}

// ParseScaled reads a plain number (parseNumber's forms: "1.5", ".25",
// "2e3") times scale, rounded half away from zero: 1.5 hours × 3600 is
// 5400 seconds. It fails on anything else and on a result beyond int64.
func ParseScaled(s string, scale int64) (int64, error) {
	r, err := parseNumber(s)
	if err != nil {
		return 0, err
	}
	n, ok := roundScaled(r, scale)
	if !ok {
		return 0, errNotNumber
	}
	return n, nil
}

// roundScaled returns r × scale rounded half away from zero, and whether it
// fits in an int64.
func roundScaled(r *big.Rat, scale int64) (int64, bool) {
	x := new(big.Rat).Mul(r, ratInt(scale))
	num, den := new(big.Int).Set(x.Num()), x.Denom()
	neg := num.Sign() < 0
	num.Abs(num)
	q, m := new(big.Int).QuoRem(num, den, new(big.Int))
	if new(big.Int).Lsh(m, 1).Cmp(den) >= 0 {
		q.Add(q, big.NewInt(1))
	}
	if neg {
		q.Neg(q)
	}
	if !q.IsInt64() {
		return 0, false
	}
	return q.Int64(), true
}

// maxMicros caps every money figure the calculator reports (a trillion
// units of currency): beyond it a figure saturates, it never wraps.
const maxMicros int64 = 1_000_000_000_000 * 1_000_000

// toMicros converts an amount in major units to micro-units, rounding half
// away from zero, saturating (never wrapping) at ±maxMicros.
func toMicros(r *big.Rat) int64 {
	v, ok := roundScaled(r, 1_000_000)
	switch {
	case !ok && r.Sign() < 0, v < -maxMicros:
		return -maxMicros
	case !ok, v > maxMicros:
		return maxMicros
	}
	return v
}

// fromMicros is the exact rational value of an amount in micro-units.
func fromMicros(m int64) *big.Rat { return new(big.Rat).SetFrac64(m, 1_000_000) }

// ratFloat is r as a float64 for JSON and display; a rational is always
// finite, so the float is too (Float64 saturates to ±MaxFloat64 at worst,
// and no validated input comes near).
func ratFloat(r *big.Rat, decimals int) float64 {
	v, _ := roundScaled(r, pow10(decimals))
	f, _ := new(big.Rat).SetFrac64(v, pow10(decimals)).Float64()
	return f
}

func pow10(n int) int64 {
	p := int64(1)
	for range n {
		p *= 10
	}
	return p
}

// FormatNumber renders r with at most decimals decimals and no trailing
// zeros: the canonical text used in shareable URLs ("0.5", "250000").
func FormatNumber(r *big.Rat, decimals int) string {
	if r == nil {
		return ""
	}
	s := r.FloatString(decimals)
	if strings.Contains(s, ".") {
		s = strings.TrimRight(strings.TrimRight(s, "0"), ".")
	}
	if s == "-0" {
		s = "0"
	}
	return s
}

// mulDiv returns a×b/c rounded half away from zero, computed without
// overflow; ok is false when the result does not fit (or c is 0).
func mulDiv(a, b, c int64) (int64, bool) {
	if c == 0 {
		return 0, false
	}
	return roundScaled(new(big.Rat).SetFrac(new(big.Int).Mul(big.NewInt(a), big.NewInt(b)), big.NewInt(c)), 1)
}
