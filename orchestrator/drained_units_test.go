package orchestrator

import (
	"context"
	"reflect"
	"testing"

	"workbench/orchestrator/scheduler"
)

// A drained shared GPU is out of service as slices of its model's slice
// pool, not as a whole GPU: the queue said "3 out of service" with two
// whole GPUs drained, and a slice request that waited only for the
// shared GPU was never told.
func TestDrainedUnitsPerPool(t *testing.T) {
	r := newUnitTelRig(t)
	ctx := context.Background()
	for _, i := range []int{0, 2, 4} { // devs[2] is shared in two slices
		if err := r.store.SetGPUDrained(ctx, r.devs[i].UUID, true, "admin", "maintenance"); err != nil {
			t.Fatal(err)
		}
	}
	got, err := r.m.pool.DrainedUnits(ctx)
	if err != nil {
		t.Fatal(err)
	}
	model := r.devs[0].Model
	want := map[scheduler.Pool]int{scheduler.PoolGPU(model): 2, scheduler.PoolSlice(model): 2}
	if !reflect.DeepEqual(got, want) {
		t.Fatalf("drained units %v, want %v", got, want)
	}
}
