package gpu

import (
	"fmt"
	"strings"
)

// Mode kinds. A Mode is parsed once from configuration (WORKBENCH_GPUS) and
// handed to New.
const (
	KindAuto = "auto"
	KindNone = "none"
	KindMock = "mock"
)

// mockNames lists the go-nvml mock servers a "mock:X" mode may name, in the
// order shown in error messages.
var mockNames = []string{"dgxa100", "dgxh100", "dgxh200"}

// ValidModes lists every accepted mode string, for flag help and errors.
func ValidModes() []string {
	out := []string{KindAuto, KindNone}
	for _, m := range mockNames {
		out = append(out, KindMock+":"+m)
	}
	return out
}

// Mode selects the inventory backend.
type Mode struct {
	Kind string // "auto" | "none" | "mock"
	Mock string // mock server name when Kind is "mock", e.g. "dgxh100"
}

// ParseMode accepts "auto", "none" and "mock:<server>". Anything else is an
// error that names the valid values, so a typo in the configuration is
// caught at start instead of quietly running without GPUs.
func ParseMode(s string) (Mode, error) {
	v := strings.ToLower(strings.TrimSpace(s))
	switch v {
	case KindAuto, KindNone:
		return Mode{Kind: v}, nil
	}
	if name, ok := strings.CutPrefix(v, KindMock+":"); ok {
		for _, m := range mockNames {
			if name == m {
				return Mode{Kind: KindMock, Mock: m}, nil
			}
		}
	}
	return Mode{}, fmt.Errorf("invalid GPU mode %q: valid values are %s",
		s, strings.Join(ValidModes(), ", "))
}

// String renders the mode in the form ParseMode accepts.
func (m Mode) String() string {
	if m.Kind == KindMock {
		return KindMock + ":" + m.Mock
	}
	return m.Kind
}
