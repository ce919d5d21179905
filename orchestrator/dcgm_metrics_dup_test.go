package orchestrator

import (
	"testing"

	"github.com/prometheus/client_golang/prometheus"

	"workbench/models"
	"workbench/orchestrator/gpu"
)

// usesCollector serves fixed GPU uses through the DCGM collector's own
// series code, as a registry gathers them for /metrics.
type usesCollector struct {
	c    *dcgmCollector
	uses []GPUUse
}

func (u usesCollector) Describe(ch chan<- *prometheus.Desc) { u.c.describe(ch) }
func (u usesCollector) Collect(ch chan<- prometheus.Metric) { u.c.collectUses(ch, u.uses) }

// A shared GPU taken whole (a claim after its slice holders yielded) lists
// its slices under the whole GPU's holder. Their series had the GPU's own
// labels, and the duplicate failed every scrape of /metrics with a 500.
func TestDCGMSharedGPUHeldWholeScrapes(t *testing.T) {
	alice := Holder{WorkbenchID: "wb-alice", User: "alice", Group: "vision"}
	bob := Holder{WorkbenchID: "wb-bob", User: "bob", Group: "audio"}
	sample := gpu.Sample{UUID: "GPU-6", UtilPercent: 40, MemUsedMiB: 1000}
	slice := func(h Holder) UnitUse {
		return UnitUse{Kind: models.UnitSlice, UUID: "GPU-6", GPUInstanceID: -1, Holder: h, Sample: sample}
	}
	uses := []GPUUse{
		// Held whole by alice: both slices hers.
		{Index: 6, UUID: "GPU-6", Model: "NVIDIA H100 80GB HBM3", Holder: alice, Sample: sample, HasSample: true,
			Units: []UnitUse{slice(alice), slice(alice)}},
		// Shared by two holders: one series each besides the GPU's.
		{Index: 2, UUID: "GPU-2", Model: "NVIDIA H100 80GB HBM3", Sample: sample, HasSample: true,
			Units: []UnitUse{slice(alice), slice(bob)}},
	}
	reg := prometheus.NewRegistry()
	reg.MustRegister(usesCollector{c: newDCGMCollector(&Manager{}), uses: uses})
	fams, err := reg.Gather()
	if err != nil {
		t.Fatalf("gather: %v", err)
	}
	count := map[string]int{}
	for _, f := range fams {
		if f.GetName() != "DCGM_FI_DEV_FB_USED" {
			continue
		}
		for _, m := range f.GetMetric() {
			for _, l := range m.GetLabel() {
				if l.GetName() == "gpu" {
					count[l.GetValue()]++
				}
			}
		}
	}
	if count["6"] != 1 || count["2"] != 3 {
		t.Errorf("FB_USED series per GPU: %v; want 1 for the GPU held whole, 3 for the shared one (GPU and two holders)", count)
	}
}
