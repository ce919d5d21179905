package orchestrator

import (
	"context"
	"errors"
	"strconv"
	"testing"
	"time"

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

// Audited: the change and its audit row commit together or not at all.
// Each case fails if the row were written outside the change's
// transaction: before the change (a failed change would leave its row),
// after it (a failed row would leave the change), or as a separate write
// (visible from outside before the transaction ends).
func TestMemAuditedCommitsChangeAndRowTogether(t *testing.T) {
	t.Parallel()
	r := newMemRig(t)
	ctx := context.Background()
	groups := func() []string {
		t.Helper()
		names, err := r.store.GroupNames(ctx)
		if err != nil {
			t.Fatal(err)
		}
		return names
	}
	audit := func() []models.AuditEntry {
		t.Helper()
		entries, err := r.store.ListAudit(ctx, 10)
		if err != nil {
			t.Fatal(err)
		}
		return entries
	}
	create := func(tx *models.Store, name string) models.AuditRecord {
		t.Helper()
		if _, err := tx.CreateGroup(ctx, name, ""); err != nil {
			t.Fatal(err)
		}
		return models.AuditRecord{Action: "group.create", Target: name, After: map[string]string{"name": name}}
	}

	// The change fails after it wrote: neither the group nor a row.
	boom := errors.New("refused after the write")
	if err := r.m.Audited(ctx, "root", func(tx *models.Store) (models.AuditRecord, error) {
		return create(tx, "doomed"), boom
	}); !errors.Is(err, boom) {
		t.Fatalf("a failed change: %v, want its error", err)
	}
	// The audit row cannot be written (its context ends inside the
	// change): the change rolls back with it.
	cctx, cancel := context.WithCancel(ctx)
	if err := r.m.Audited(cctx, "root", func(tx *models.Store) (models.AuditRecord, error) {
		rec := create(tx, "unrecorded")
		cancel()
		return rec, nil
	}); err == nil {
		t.Fatal("the audit row's write failed, yet Audited reported success")
	}
	// A change that names no action is refused, and undone.
	if err := r.m.Audited(ctx, "root", func(tx *models.Store) (models.AuditRecord, error) {
		rec := create(tx, "anonymous")
		rec.Action = ""
		return rec, nil
	}); err == nil {
		t.Fatal("a change without an action was accepted")
	}
	if g, a := groups(), audit(); len(g) != 0 || len(a) != 0 {
		t.Fatalf("after three failed changes: groups %v, audit %+v; want none of either", g, a)
	}

	// A change that works: both are there, the row by the actor; and
	// while the transaction is open, neither is visible outside it.
	var seenInside []models.AuditEntry
	var groupsInside []string
	if err := r.m.Audited(ctx, "root", func(tx *models.Store) (models.AuditRecord, error) {
		rec := create(tx, "ml")
		seenInside, groupsInside = audit(), groups()
		return rec, nil
	}); err != nil {
		t.Fatal(err)
	}
	if len(seenInside) != 0 || len(groupsInside) != 0 {
		t.Fatalf("visible outside the open transaction: audit %+v, groups %v", seenInside, groupsInside)
	}
	a := audit()
	if g := groups(); len(g) != 1 || g[0] != "ml" || len(a) != 1 {
		t.Fatalf("groups %v, audit %+v: want ml and its row", g, a)
	}
	if e := a[0]; e.Actor != "root" || e.Action != "group.create" || e.Target != "ml" || e.After != `{"name":"ml"}` {
		t.Fatalf("audit row %+v", e)
	}
}

// Record writes the row of an action outside the database, and refuses a
// row that says neither who nor what.
func TestMemRecordWritesTheRow(t *testing.T) {
	t.Parallel()
	r := newMemRig(t)
	ctx := context.Background()
	if err := r.m.Record(ctx, models.AuditRecord{Action: "session.sudo"}); err == nil {
		t.Fatal("a row without an actor was written")
	}
	if err := r.m.Record(ctx, models.AuditRecord{Actor: "root", Action: "image.pull", Target: "jupyter", After: map[string]string{"image": "x"}}); err != nil {
		t.Fatal(err)
	}
	entries, _ := r.store.ListAudit(ctx, 10)
	if len(entries) != 1 || entries[0].Actor != "root" || entries[0].Action != "image.pull" || entries[0].Target != "jupyter" {
		t.Fatalf("audit %+v: want one image.pull row by root", entries)
	}
}

// An administrator's boost is recorded with it; a boost refused (the
// workbench is not queued) changes nothing and records nothing.
func TestMemBoostByIsAudited(t *testing.T) {
	t.Parallel()
	r := newQueueRig(t)
	ctx := context.Background()
	r.fill(t, r.alice, LaunchRequest{})
	wb := r.launch(t, r.alice, "waiting", LaunchRequest{Queue: true})
	if err := r.m.Drain(ctx); err != nil {
		t.Fatal(err)
	}
	if err := r.m.BoostBy(ctx, wb.ID, "root"); err != nil {
		t.Fatal(err)
	}
	entries, _ := r.store.ListAudit(ctx, 10)
	if len(entries) != 1 || entries[0].Action != "queue.boost" || entries[0].Actor != "root" || entries[0].Target != wb.ID ||
		entries[0].Before != `{"queue_position":1}` {
		t.Fatalf("audit %+v: want one queue.boost row by root from position 1", entries)
	}
	if err := r.m.Stop(ctx, wb.ID, "gone"); err != nil {
		t.Fatal(err)
	}
	r.m.Wait()
	if err := r.m.BoostBy(ctx, wb.ID, "root"); !errors.Is(err, models.ErrConflict) {
		t.Fatalf("boosting a stopped workbench: %v, want ErrConflict", err)
	}
	if entries, _ := r.store.ListAudit(ctx, 10); len(entries) != 1 {
		t.Fatalf("a refused boost was recorded: %+v", entries)
	}
}

// Sharing a GPU in slices is recorded in the same transaction; an unknown
// GPU changes nothing and records nothing.
func TestMemGPUShareIsAudited(t *testing.T) {
	t.Parallel()
	r := newMemRig(t)
	ctx := context.Background()
	gpus, err := r.m.pool.List(ctx)
	if err != nil || len(gpus) == 0 {
		t.Fatalf("pool: %v %v", gpus, err)
	}
	if err := r.m.pool.SetShared(ctx, "GPU-nope", models.SharedSetting{Slices: 2}, "root"); !errors.Is(err, models.ErrNotFound) {
		t.Fatalf("unknown GPU: %v", err)
	}
	if entries, _ := r.store.ListAudit(ctx, 10); len(entries) != 0 {
		t.Fatalf("a refused share was recorded: %+v", entries)
	}
	if err := r.m.pool.SetShared(ctx, gpus[len(gpus)-1].UUID, models.SharedSetting{Slices: 2}, "root"); err != nil {
		t.Fatal(err)
	}
	entries, _ := r.store.ListAudit(ctx, 10)
	if len(entries) != 1 || entries[0].Action != "gpu.share" || entries[0].Actor != "root" || entries[0].Target != gpus[len(gpus)-1].UUID {
		t.Fatalf("audit %+v: want one gpu.share row by root", entries)
	}
}

// A reservation and its release are recorded with them, by whoever made
// them; a refused booking (more units than the pool) records nothing, and
// a refused cancel (someone else's) neither.
func TestMemReservationsAreAudited(t *testing.T) {
	t.Parallel()
	r := newQueueRig(t)
	ctx := context.Background()
	carol, dave := r.user(t, "carol"), r.user(t, "dave")
	start := r.m.now().Add(time.Hour)
	model := "NVIDIA H100 80GB HBM3"
	root := &models.User{Username: "root", Role: models.RoleAdmin} // books for carol
	if _, err := r.m.Reserve(ctx, carol, ReserveRequest{Model: model, Units: 9, Start: start, End: start.Add(time.Hour), By: root}); err == nil {
		t.Fatal("booked 9 of 8 GPUs")
	}
	res, err := r.m.Reserve(ctx, carol, ReserveRequest{Model: model, Units: 1, Start: start, End: start.Add(time.Hour), Note: "course", By: root})
	if err != nil {
		t.Fatal(err)
	}
	if err := r.m.CancelReservation(ctx, dave, res.ID); !errors.Is(err, models.ErrNotFound) {
		t.Fatalf("dave cancelling carol's reservation: %v", err)
	}
	if err := r.m.CancelReservation(ctx, carol, res.ID); err != nil {
		t.Fatal(err)
	}
	entries, _ := r.store.ListAudit(ctx, 10) // newest first
	id := strconv.FormatInt(res.ID, 10)
	if len(entries) != 2 || entries[1].Action != "reservation.create" || entries[1].Actor != "root" || entries[1].Target != id ||
		entries[0].Action != "reservation.cancel" || entries[0].Actor != "carol" || entries[0].Target != id {
		t.Fatalf("audit %+v: want reservation.create by root, then reservation.cancel by carol, of %s", entries, id)
	}
}
