package models

import (
	"context"
	"errors"
	"testing"
)

// A change and its audit row commit together or not at all.
func TestInTxCommitsOrRollsBackTheChangeWithItsAudit(t *testing.T) {
	ctx := context.Background()
	s, _ := newTestStore(t)
	boom := errors.New("boom")
	err := s.InTx(ctx, func(tx *Store) error {
		if err := tx.SetGPUDrained(ctx, "GPU-1", true, "root", ""); err != nil {
			return err
		}
		if err := tx.WriteAudit(ctx, AuditRecord{Actor: "root", Action: "gpu.drain", Target: "GPU-1"}); err != nil {
			return err
		}
		return boom
	})
	if !errors.Is(err, boom) {
		t.Fatalf("InTx: %v", err)
	}
	states, _ := s.GPUStates(ctx)
	entries, _ := s.ListAudit(ctx, 10)
	if states["GPU-1"].Drained || len(entries) != 0 {
		t.Fatalf("rolled back, yet drained %v and %d audit rows", states["GPU-1"].Drained, len(entries))
	}
	if err := s.InTx(ctx, func(tx *Store) error {
		if err := tx.SetGPUDrained(ctx, "GPU-1", true, "root", ""); err != nil {
			return err
		}
		return tx.WriteAudit(ctx, AuditRecord{Actor: "root", Action: "gpu.drain", Target: "GPU-1", After: map[string]bool{"drained": true}})
	}); err != nil {
		t.Fatal(err)
	}
	states, _ = s.GPUStates(ctx)
	entries, _ = s.ListAudit(ctx, 10)
	if !states["GPU-1"].Drained || len(entries) != 1 || entries[0].After != `{"drained":true}` {
		t.Fatalf("committed: drained %v, audit %+v", states["GPU-1"].Drained, entries)
	}
}
