package models

import (
	"context"
	"testing"
	"time"

	"gorm.io/gorm"
)

// What a preemption was for (preempted_for) lasts while the preempted
// workbench waits, in state preempted or queued again by auto-resume
// (Requeue.Resume), and is forgotten by a new run (RestartWorkbench, the
// queue's Place) or a new request its owner puts in the queue
// (RequeueWorkbench): the API shows it only while it is current.
func TestPreemptedForLastsUntilTheNextRunOrRequest(t *testing.T) {
	s, _ := newTestStore(t)
	ctx := context.Background()
	if err := s.SeedCatalog(ctx, nil); err != nil {
		t.Fatal(err)
	}
	alice, err := s.CreateUser(ctx, NewUser{Username: "alice", Password: "alice-password-1"})
	if err != nil {
		t.Fatal(err)
	}
	img, _ := s.ListImages(ctx, false)
	fl, _ := s.ListFlavors(ctx, false)
	const needed = "priority interactive, 1 × H100 80GB HBM3 needed, 0 free"
	preempted := func(id string) {
		t.Helper()
		now := time.Now().UTC()
		if _, err := s.sql.ExecContext(ctx, `INSERT INTO workbenches (id, name, owner_id, image_id, flavor_id, state, preempted_for, token, created_at, updated_at)
			VALUES (?, ?, ?, ?, ?, ?, ?, 't', ?, ?)`, id, id, alice.ID, img[0].ID, fl[0].ID, StatePreempted, needed, now, now); err != nil {
			t.Fatal(err)
		}
	}
	preemptedFor := func(id string) string {
		t.Helper()
		var got string
		if err := s.sql.QueryRowContext(ctx, "SELECT preempted_for FROM workbenches WHERE id = ?", id).Scan(&got); err != nil {
			t.Fatal(err)
		}
		return got
	}
	preempted("wb-resume")
	if err := s.db.Transaction(func(tx *gorm.DB) error {
		return requeue(tx, "wb-resume", Requeue{Message: "preempted; waiting to resume", Resume: true}, time.Now())
	}); err != nil {
		t.Fatal(err)
	}
	if got := preemptedFor("wb-resume"); got != needed {
		t.Errorf("queued again by auto-resume: preempted_for %q, want %q", got, needed)
	}
	if err := s.DrainQueue(ctx, func(q *QueueTx) error { _, err := q.Place("wb-resume", GPUNeed{}, false); return err }); err != nil {
		t.Fatal(err)
	}
	if got := preemptedFor("wb-resume"); got != "" {
		t.Errorf("placed from the queue: preempted_for %q", got)
	}

	preempted("wb-start")
	if _, err := s.RestartWorkbench(ctx, "wb-start", GPUNeed{}, 0, nil); err != nil {
		t.Fatal(err)
	}
	if got := preemptedFor("wb-start"); got != "" {
		t.Errorf("started again: preempted_for %q", got)
	}

	preempted("wb-queue")
	if err := s.RequeueWorkbench(ctx, "wb-queue", "waiting in the queue to start again", nil); err != nil {
		t.Fatal(err)
	}
	if got := preemptedFor("wb-queue"); got != "" {
		t.Errorf("started again into the queue: preempted_for %q", got)
	}
}
