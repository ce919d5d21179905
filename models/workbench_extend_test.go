package models

import (
	"context"
	"testing"
)

// An extension applies only from the value it was computed on, and only to
// a running workbench: two clicks at once add one step, and a workbench
// stopped meanwhile keeps none.
func TestExtendWorkbenchRuntimeIsConditional(t *testing.T) {
	s, _ := newTestStore(t)
	ctx := context.Background()
	if err := s.SeedCatalog(ctx, nil); err != nil {
		t.Fatal(err)
	}
	u, err := s.CreateUser(ctx, NewUser{Username: "alice", Password: "correct-horse-1"})
	if err != nil {
		t.Fatal(err)
	}
	img, _ := s.ListImages(ctx, false)
	fl, _ := s.ListFlavors(ctx, false)
	wb := &Workbench{Name: "w", OwnerID: u.ID, ImageID: img[0].ID, FlavorID: fl[0].ID}
	if err := s.CreateWorkbench(ctx, wb, GPUNeed{}, nil); err != nil {
		t.Fatal(err)
	}
	if ok, err := s.ExtendWorkbenchRuntime(ctx, wb.ID, 0, 3600); ok || err != nil {
		t.Fatalf("extended a workbench that is not running: %v %v", ok, err)
	}
	if err := s.SetWorkbenchState(ctx, wb.ID, StateRunning, 100, "", nil); err != nil {
		t.Fatal(err)
	}
	if ok, err := s.ExtendWorkbenchRuntime(ctx, wb.ID, 0, 3600); !ok || err != nil {
		t.Fatalf("first extension: %v %v", ok, err)
	}
	if ok, _ := s.ExtendWorkbenchRuntime(ctx, wb.ID, 0, 3600); ok {
		t.Fatal("a second click computed on the old value was applied too")
	}
	got, err := s.WorkbenchByID(ctx, wb.ID)
	if err != nil || got.RuntimeExtensionS != 3600 {
		t.Fatalf("extension %d (%v), want 3600", got.RuntimeExtensionS, err)
	}
}
