package models

import (
	"context"
	"errors"
	"testing"
)

// The candidates a launch or a queue drain offers are read before its
// transaction; a GPU an admin drained in between is not handed out: the
// transaction reads the drained GPUs itself (a drain running while an
// admin drained every GPU placed a launch on one of them).
func TestAllocateSkipsGPUsDrainedSinceTheCandidatesWereRead(t *testing.T) {
	s, _ := newTestStore(t)
	ctx := context.Background()
	u, err := s.CreateUser(ctx, NewUser{Username: "alice", Password: "correct-horse-1"})
	if err != nil {
		t.Fatal(err)
	}
	img := validImage()
	if err := s.CreateImage(ctx, &img); err != nil {
		t.Fatal(err)
	}
	fl := &Flavor{Name: "1x H100", GPUModel: "NVIDIA H100 80GB HBM3", GPUCount: 1, CPUMilli: 1000, MemoryMiB: 1024, Enabled: true}
	if err := s.CreateFlavor(ctx, fl); err != nil {
		t.Fatal(err)
	}
	need := GPUNeed{Model: fl.GPUModel, Count: 1, Candidates: []string{"GPU-a", "GPU-b"}}
	if err := s.SetGPUDrained(ctx, "GPU-a", true, "admin", ""); err != nil {
		t.Fatal(err)
	}
	wb := &Workbench{Name: "one", OwnerID: u.ID, ImageID: img.ID, FlavorID: fl.ID, Token: "t"}
	if err := s.CreateWorkbench(ctx, wb, need, nil); err != nil {
		t.Fatal(err)
	}
	if len(wb.GPUs) != 1 || wb.GPUs[0] != "GPU-b" {
		t.Fatalf("placed on %v, want GPU-b (GPU-a is drained)", wb.GPUs)
	}
	if err := s.SetGPUDrained(ctx, "GPU-b", true, "admin", ""); err != nil {
		t.Fatal(err)
	}
	two := &Workbench{Name: "two", OwnerID: u.ID, ImageID: img.ID, FlavorID: fl.ID, Token: "t"}
	var nc *NoCapacityError
	if err := s.CreateWorkbench(ctx, two, GPUNeed{Model: fl.GPUModel, Count: 1, Candidates: []string{"GPU-a"}}, nil); !errors.As(err, &nc) {
		t.Fatalf("launch offered only a drained GPU: %v, want no capacity", err)
	}
}
