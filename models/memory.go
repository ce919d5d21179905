package models

import (
	"encoding/json"
	"math/big"
	"strings"
)

// ParseMemoryGiB reads a memory size given in GiB, decimals allowed, as
// whole MiB: "16" → 16384, "0.5" → 512. A size that is not a whole number
// of MiB (finer than 1/1024 GiB) is refused rather than rounded, so what is
// billed is exactly what was typed.
func ParseMemoryGiB(s string) (int64, error) {
	s = strings.TrimSpace(s)
	r, ok := new(big.Rat).SetString(s)
	if !ok || s == "" || strings.ContainsAny(s, "/eE") {
		return 0, invalid("memory_gib", "must be a number of GiB, such as 16 or 0.5, not %q", s)
	}
	r.Mul(r, big.NewRat(1024, 1))
	if !r.IsInt() {
		return 0, invalid("memory_gib", "must be a whole number of MiB (a multiple of 1/1024 GiB), not %q", s)
	}
	if !r.Num().IsInt64() || r.Num().Int64() > 1<<40 || r.Sign() < 0 {
		return 0, invalid("memory_gib", "is out of range")
	}
	return r.Num().Int64(), nil
}

// FormatMemoryGiB renders MiB as GiB, exactly: 16384 → "16", 512 → "0.5",
// 1 → "0.0009765625" (a MiB count over 1024 is a finite decimal).
func FormatMemoryGiB(mib int64) string {
	s := new(big.Rat).SetFrac64(mib, 1024).FloatString(10)
	if strings.Contains(s, ".") {
		s = strings.TrimRight(strings.TrimRight(s, "0"), ".")
	}
	return s
}

// MarshalJSON keeps the SPEC's memory_gib field (a number of GiB, exact:
// MiB/1024 is a dyadic fraction a float64 holds exactly) beside memory_mib.
func (f Flavor) MarshalJSON() ([]byte, error) {
	type plain Flavor
	return json.Marshal(struct {
		plain
		MemoryGiB json.Number `json:"memory_gib"`
		Shared    bool        `json:"shared"`
	}{plain(f), json.Number(FormatMemoryGiB(f.MemoryMiB)), f.Shared()})
}
