package web

import (
	"bufio"
	"strings"
	"testing"
)

func TestMemTotalBytes(t *testing.T) {
	for in, want := range map[string]int64{
		"MemTotal:       24576000 kB\nMemFree: 1 kB\n": 24576000 << 10,
		"MemFree: 1 kB\nMemTotal: 2048 kB\n":           2048 << 10,
		"MemTotal: 2048 MB\n":                          0, // not the kernel's unit: unknown
		"MemTotal: lots kB\n":                          0,
		"":                                             0,
	} {
		if got := memTotalBytes(bufio.NewScanner(strings.NewReader(in))); got != want {
			t.Errorf("%q: %d, want %d", in, got, want)
		}
	}
}
