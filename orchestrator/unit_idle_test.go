package orchestrator

import (
	"testing"
	"time"

	"workbench/models"
	"workbench/orchestrator/gpu"
)

// TestUnitIdleRunsFollowEachUnitsOwnReadings: a MIG instance whose driver
// answers utilisation per instance is idle from its first readable sample
// below the threshold; a busy or unreadable sample ends the run, and a
// unit no longer held (or free) has none.
func TestUnitIdleRunsFollowEachUnitsOwnReadings(t *testing.T) {
	t0 := time.Date(2026, 3, 2, 12, 0, 0, 0, time.UTC)
	use := func(at time.Time, util uint32, unread gpu.Field, holder string) []GPUUse {
		return []GPUUse{{UUID: "GPU-a", Units: []UnitUse{
			{Kind: models.UnitMIG, UUID: "MIG-1", Holder: Holder{WorkbenchID: holder},
				Sample: gpu.Sample{UUID: "MIG-1", At: at, UtilPercent: util, Unread: unread}},
			{Kind: models.UnitMIG, UUID: "MIG-2", Sample: gpu.Sample{UUID: "MIG-2", At: at}}, // free
		}}}
	}
	var r unitIdleRuns
	r.note(use(t0, 2, 0, "wb1"), 5)
	r.note(use(t0.Add(time.Minute), 4, 0, "wb1"), 5)
	if since, ok := r.get("wb1", "MIG-1"); !ok || !since.Equal(t0) {
		t.Fatalf("idle since %v %v, want %v", since, ok, t0)
	}
	if _, ok := r.get("", "MIG-2"); ok {
		t.Error("a free instance has an idle run")
	}
	r.note(use(t0.Add(2*time.Minute), 0, gpu.FieldUtil, "wb1"), 5)
	if _, ok := r.get("wb1", "MIG-1"); ok {
		t.Error("an unreadable sample did not end the idle run")
	}
	r.note(use(t0.Add(3*time.Minute), 1, 0, "wb1"), 5)
	r.note(use(t0.Add(4*time.Minute), 5, 0, "wb1"), 5)
	if _, ok := r.get("wb1", "MIG-1"); ok {
		t.Error("a sample at the threshold did not end the idle run")
	}
	r.note(use(t0.Add(5*time.Minute), 0, 0, "wb1"), 5)
	r.note(use(t0.Add(6*time.Minute), 0, 0, "wb2"), 5)
	if _, ok := r.get("wb1", "MIG-1"); ok {
		t.Error("the previous holder kept its idle run")
	}
	if since, ok := r.get("wb2", "MIG-1"); !ok || !since.Equal(t0.Add(6*time.Minute)) {
		t.Errorf("new holder idle since %v %v", since, ok)
	}
}
