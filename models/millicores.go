package models

import (
	"bytes"
	"errors"
	"strconv"
	"strings"
)

// Millicores is a CPU share in thousandths of a core, kept as an integer
// from the form or the API to the ledger: 2.01 cores is 2010, never the
// 2009 a float truncated to. In JSON it is a plain number of cores
// (cpu_cores, SPEC §8), written and read as decimal text, exactly.
type Millicores int64

// ParseMillicores reads a decimal number of cores ("2", "2.01", "0.125")
// exactly; more than three decimals, signs, exponents and other text are
// refused.
func ParseMillicores(s string) (Millicores, error) {
	s = strings.TrimSpace(s)
	whole, frac, _ := strings.Cut(s, ".")
	if whole == "" {
		whole = "0"
	}
	if s == "" || s == "." || !allDigits(whole) || !allDigits(frac) {
		return 0, errors.New("enter a number of cores such as 4 or 0.5")
	}
	if len(frac) > 3 {
		return 0, errors.New("at most 3 decimals (a thousandth of a core)")
	}
	w, err := strconv.ParseInt(whole, 10, 64)
	if err != nil || w > 1_000_000 {
		return 0, errors.New("is too large")
	}
	var f int64
	if frac != "" {
		f, _ = strconv.ParseInt(frac+strings.Repeat("0", 3-len(frac)), 10, 64)
	}
	return Millicores(w*1000 + f), nil
}

func allDigits(s string) bool {
	for _, r := range s {
		if r < '0' || r > '9' {
			return false
		}
	}
	return true
}

// String renders cores with no trailing zeros: 2010 → "2.01", 4000 → "4".
func (m Millicores) String() string {
	s := strconv.FormatInt(int64(m)/1000, 10)
	if frac := int64(m) % 1000; frac != 0 {
		s += strings.TrimRight("."+strconv.FormatInt(1000+frac, 10)[1:], "0")
	}
	return s
}

// Cores is the share as a float, for display only.
func (m Millicores) Cores() float64 { return float64(m) / 1000 }

// MarshalJSON writes the number of cores as a JSON number.
func (m Millicores) MarshalJSON() ([]byte, error) { return []byte(m.String()), nil }

// UnmarshalJSON reads a JSON number of cores exactly (its text, not a
// float); a quoted number is accepted too.
func (m *Millicores) UnmarshalJSON(b []byte) error {
	b = bytes.TrimSpace(b)
	if bytes.Equal(b, []byte("null")) {
		return nil
	}
	if len(b) >= 2 && b[0] == '"' {
		b = b[1 : len(b)-1]
	}
	v, err := ParseMillicores(string(b))
	if err != nil {
		return &ValidationError{Field: "cpu_cores", Message: err.Error()}
	}
	*m = v
	return nil
}
