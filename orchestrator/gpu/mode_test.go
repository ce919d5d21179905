package gpu

import (
	"strings"
	"testing"
)

func TestParseModeValid(t *testing.T) {
	cases := map[string]Mode{
		"auto":         {Kind: "auto"},
		"none":         {Kind: "none"},
		" AUTO ":       {Kind: "auto"},
		"mock:dgxa100": {Kind: "mock", Mock: "dgxa100"},
		"mock:dgxh100": {Kind: "mock", Mock: "dgxh100"},
		"mock:dgxh200": {Kind: "mock", Mock: "dgxh200"},
	}
	for in, want := range cases {
		got, err := ParseMode(in)
		if err != nil {
			t.Fatalf("ParseMode(%q): %v", in, err)
		}
		if got != want {
			t.Errorf("ParseMode(%q) = %+v, want %+v", in, got, want)
		}
		if again, err := ParseMode(got.String()); err != nil || again != got {
			t.Errorf("round trip of %q via %q = %+v, %v", in, got.String(), again, err)
		}
	}
}

func TestParseModeInvalid(t *testing.T) {
	for _, in := range []string{"", "mock", "mock:", "mock:dgxz999", "nvml", "mock:dgxh100:x", "gpu"} {
		_, err := ParseMode(in)
		if err == nil {
			t.Errorf("ParseMode(%q) succeeded, want error", in)
			continue
		}
		for _, v := range ValidModes() {
			if !strings.Contains(err.Error(), v) {
				t.Errorf("error for %q does not name valid value %q: %v", in, v, err)
			}
		}
	}
}
