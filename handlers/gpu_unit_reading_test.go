package handlers

import (
	"testing"

	"workbench/orchestrator"
)

// A MIG instance's reading on /gpus: memory in GiB, and utilisation the
// driver does not give per instance named as such, never "0%".
func TestUnitReadingText(t *testing.T) {
	used, free, util := uint64(6144), uint64(4096), uint32(37)
	cases := []struct {
		r    *orchestrator.UnitReading
		want string
	}{
		{nil, ""},
		{&orchestrator.UnitReading{MemUsedMiB: &used, MemFreeMiB: &free}, "6.0 of 10.0 GiB used · utilisation not readable per instance"},
		{&orchestrator.UnitReading{MemUsedMiB: &used, MemFreeMiB: &free, UtilPercent: &util}, "6.0 of 10.0 GiB used · 37% busy"},
		{&orchestrator.UnitReading{}, "memory: could not read · utilisation not readable per instance"},
	}
	for _, c := range cases {
		if got := unitReadingText(c.r); got != c.want {
			t.Errorf("unitReadingText(%+v) = %q, want %q", c.r, got, c.want)
		}
	}
}
