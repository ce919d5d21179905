package templates_test

import (
	"strings"
	"testing"

	"workbench/templates"
)

// A MIG GPU whose instances the pool offers lists each instance once: in
// the unit list, with its holder and reading and its UUID on hover, not
// again as a bare inventory line above it.
func TestGPUsPageListsMIGInstancesOnce(t *testing.T) {
	v := templates.GPUsView{Status: "simulated", Simulated: true, CanDrain: true, GPUs: []templates.GPURow{{
		Index: 7, UUID: "GPU-7777", Model: "NVIDIA H100 80GB HBM3", MemoryMiB: 81559, State: "mig",
		Name: "GPU 7 · H100 80GB HBM3", StateLabel: "MIG: 1 of 2 instances free", MIGEnabled: true,
		MIG: []templates.MIGRow{{Profile: "1g.10gb", UUID: "MIG-a", MemoryMiB: 9856}, {Profile: "1g.10gb", UUID: "MIG-b", MemoryMiB: 9856}},
		Units: []templates.GPUUnitRow{
			{Kind: "mig", UUID: "MIG-a", Label: "MIG 1g.10gb", Free: true, Reading: "1.1 of 10.0 GiB used"},
			{Kind: "mig", UUID: "MIG-b", Label: "MIG 1g.10gb", HeldBy: "train · ada"},
		},
	}}}
	row := render(t, templates.GPUsPage(adminPage("GPUs", "/gpus"), v)).Find(testid("gpu-row"))

	if n := row.Find(testid("mig-row")).Length(); n != 0 {
		t.Errorf("%d bare MIG lines beside the unit list, want none", n)
	}
	units := row.Find(testid("gpu-unit"))
	if units.Length() != 2 {
		t.Fatalf("%d units listed, want 2", units.Length())
	}
	for i, want := range []string{"MIG-a", "MIG-b"} {
		if title, _ := units.Eq(i).Attr("title"); title != want {
			t.Errorf("unit %d tooltip %q, want its UUID %q", i, title, want)
		}
	}
	if got := squash(units.Eq(1).Text()); !strings.Contains(got, "train · ada") {
		t.Errorf("held unit reads %q, want its holder", got)
	}
	if got := strings.Count(row.Text(), "1g.10gb"); got != 2 {
		t.Errorf("the profile appears %d times in the row, want once per instance (2)", got)
	}
}
