package orchestrator

import (
	"context"
	"sync"
	"testing"
	"time"

	"workbench/models"
)

// sentNotices records what the configured channels were asked to send.
type sentNotices struct {
	mu  sync.Mutex
	got []Notice
}

func (s *sentNotices) Name() string { return "test" }

func (s *sentNotices) Send(_ context.Context, n Notice) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.got = append(s.got, n)
	return nil
}

func (s *sentNotices) all() []Notice {
	s.mu.Lock()
	defer s.mu.Unlock()
	return append([]Notice(nil), s.got...)
}

// A user who turned the email of their workbench notices off still gets
// each notice in the portal, and the channels get it without an address
// (the mail sender then sends nothing; the operator's webhook still hears
// of it); turned on, the address goes with it.
func TestMemWorkbenchNoticeEmailFollowsTheOwnersChoice(t *testing.T) {
	t.Parallel()
	r := newQueueRig(t)
	ctx := context.Background()
	sent := &sentNotices{}
	r.m.NotifyOwnersVia("https://portal.example.org", sent)
	dana, err := r.store.CreateUser(ctx, models.NewUser{Username: "dana", Email: "dana@example.org", Password: "dana-password", Role: "user"})
	if err != nil {
		t.Fatal(err)
	}
	wb, freeOne := r.queuedBehindAFullPool(t, dana)
	r.advance(5 * time.Minute)
	freeOne()
	r.waitState(t, wb.ID, models.StateRunning)
	waitFor(t, func() bool { return len(sent.all()) == 1 }) // told just after it runs
	if n := sent.all()[0]; n.Event != EventStarted || n.Email != "dana@example.org" {
		t.Fatalf("with email on: %+v", n)
	}

	if err := r.store.SetEmailWorkbenchNotices(ctx, dana.ID, false); err != nil {
		t.Fatal(err)
	}
	if err := r.m.StopByAdmin(ctx, wb.ID, "stopped by an administrator: maintenance"); err != nil {
		t.Fatal(err)
	}
	got := sent.all()
	if len(got) != 2 || got[1].Event != EventStopped || got[1].Email != "" || got[1].User != "dana" {
		t.Fatalf("with email off: %+v", got)
	}
	if ns, err := r.store.ListNotifications(ctx, dana.ID, 10); err != nil || len(ns) != 2 {
		t.Fatalf("in-app notifications %+v (%v): both notices belong there", ns, err)
	}
}
