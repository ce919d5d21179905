package orchestrator

import (
	"context"
	"errors"
	"testing"

	"workbench/models"
)

// Draining a GPU writes its audit row with the change (one transaction);
// an unknown GPU changes nothing and records nothing.
func TestMemGPUDrainIsAudited(t *testing.T) {
	t.Parallel()
	r := newMemRig(t)
	ctx := context.Background()
	gpus, err := r.m.pool.List(ctx)
	if err != nil || len(gpus) == 0 {
		t.Fatalf("pool: %v %v", gpus, err)
	}
	uuid := gpus[0].UUID
	if err := r.m.pool.SetDrained(ctx, "GPU-nope", true, "root"); !errors.Is(err, models.ErrNotFound) {
		t.Fatalf("unknown GPU: %v", err)
	}
	if err := r.m.pool.SetDrained(ctx, uuid, true, "root"); err != nil {
		t.Fatal(err)
	}
	entries, err := r.store.ListAudit(ctx, 10)
	if err != nil || len(entries) != 1 {
		t.Fatalf("audit %+v (%v): want one row", entries, err)
	}
	e := entries[0]
	if e.Actor != "root" || e.Action != "gpu.drain" || e.Target != uuid || e.Before != `{"drained":false}` || e.After != `{"drained":true}` {
		t.Fatalf("audit row %+v", e)
	}
}

// A quota change and its audit row commit together; a refused one leaves
// neither.
func TestMemSetQuotaIsAuditedInItsTransaction(t *testing.T) {
	t.Parallel()
	r := newMemRig(t)
	ctx := context.Background()
	two := int64(2)
	bad := int64(0)
	err := r.m.SetQuota(ctx, QuotaChange{Actor: "root", Scope: models.ScopeUser, SubjectID: r.wb.OwnerID, Name: "alice",
		Limits: models.Limits{MaxIdleMinutes: &bad}})
	var ve *models.ValidationError
	if !errors.As(err, &ve) {
		t.Fatalf("a bad quota: %v; want a validation error", err)
	}
	if entries, _ := r.store.ListAudit(ctx, 10); len(entries) != 0 {
		t.Fatalf("a refused quota was audited: %+v", entries)
	}
	if err := r.m.SetQuota(ctx, QuotaChange{Actor: "root", Scope: models.ScopeUser, SubjectID: r.wb.OwnerID, Name: "alice",
		Limits: models.Limits{MaxGPUs: &two}}); err != nil {
		t.Fatal(err)
	}
	q, set, err := r.store.Quota(ctx, models.ScopeUser, r.wb.OwnerID)
	if err != nil || !set || q.MaxGPUs == nil || *q.MaxGPUs != 2 {
		t.Fatalf("stored quota %+v set %v (%v)", q, set, err)
	}
	entries, _ := r.store.ListAudit(ctx, 10)
	if len(entries) != 1 || entries[0].Action != "quota.set" || entries[0].Target != "user:alice" || entries[0].Actor != "root" {
		t.Fatalf("audit %+v: want one quota.set row for user:alice", entries)
	}
}

// An egress policy change is stored with its audit row (before and after)
// in one transaction.
func TestMemSetEgressPolicyIsAudited(t *testing.T) {
	t.Parallel()
	r := newMemRig(t)
	r.m.UseFirewall(&recordingFirewall{})
	ctx := context.Background()
	p, err := ParseEgressPolicy("none", "")
	if err != nil {
		t.Fatal(err)
	}
	if _, err := r.m.SetEgressPolicyBy(ctx, p, "root"); err != nil {
		t.Fatal(err)
	}
	got, err := r.m.EgressPolicy(ctx)
	if err != nil || got.Mode != p.Mode {
		t.Fatalf("stored policy %+v (%v), want mode %s", got, err, p.Mode)
	}
	entries, _ := r.store.ListAudit(ctx, 10)
	if len(entries) != 1 || entries[0].Action != "egress.set" || entries[0].Actor != "root" || entries[0].After != `{"allow":[],"mode":"none"}` {
		t.Fatalf("audit %+v: want one egress.set row to none", entries)
	}
}
