package orchestrator

import (
	"context"
	"sync/atomic"
	"testing"
	"time"

	"workbench/orchestrator/gpu"
)

// countingInventory counts driver reads of the inventory it wraps.
type countingInventory struct {
	gpu.Inventory
	reads atomic.Int32
}

func (c *countingInventory) Devices(ctx context.Context) ([]gpu.Device, error) {
	c.reads.Add(1)
	return c.Inventory.Devices(ctx)
}

// The usage page labels GPUs by model on every view: ModelByUUID names every
// GPU of the inventory and reuses a read younger than DevicesMaxAge instead
// of asking the driver again (it needs no pool table either: the pool here
// has no store).
func TestModelByUUIDReusesARecentInventoryRead(t *testing.T) {
	ctx := context.Background()
	mock, err := gpu.New(gpu.Mode{Kind: gpu.KindMock, Mock: "dgxh100"})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = mock.Close() })
	inv := &countingInventory{Inventory: mock}
	devs, err := mock.Devices(ctx)
	if err != nil || len(devs) == 0 {
		t.Fatalf("mock inventory: %v, %d GPUs", err, len(devs))
	}
	pool := NewPool(inv, nil, nil)

	start := time.Now()
	models, err := pool.ModelByUUID(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if len(models) != len(devs) {
		t.Fatalf("%d models for %d GPUs: %v", len(models), len(devs), models)
	}
	for _, d := range devs {
		if models[d.UUID] != "NVIDIA H100 80GB HBM3" {
			t.Errorf("GPU %s is %q", d.UUID, models[d.UUID])
		}
	}
	if _, err := pool.ModelByUUID(ctx); err != nil {
		t.Fatal(err)
	}
	// A machine so busy that the second call came after the read expired may
	// read again; nothing else may.
	if n := inv.reads.Load(); n != 1 && time.Since(start) < DevicesMaxAge {
		t.Errorf("two calls within %s read the driver %d times, want 1", DevicesMaxAge, n)
	}
}
