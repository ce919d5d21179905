package runtime

import (
	"context"
	"testing"
	"time"
)

// TestListAndEvents: List and Events see this install's containers only,
// and a stop produces a die event.
func TestListAndEvents(t *testing.T) {
	t.Parallel()
	e := newEngineEnv(t)
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()

	evCtx, stopEvents := context.WithCancel(ctx)
	defer stopEvents()
	events, errs := e.d.Events(evCtx, e.install)

	net := e.network(t, ctx, "carol")
	mine, _ := e.start(t, ctx, e.spec("mine", net, ""))
	other := e.spec("other", net, "")
	other.InstallID = e.install + "-other"
	otherID, err := e.d.Create(ctx, other)
	if err != nil {
		t.Fatal(err)
	}
	if err := e.d.Start(ctx, otherID); err != nil {
		t.Fatal(err)
	}
	created := e.spec("created", net, "")
	createdID, err := e.d.Create(ctx, created) // never started: List shows it too
	if err != nil {
		t.Fatal(err)
	}

	list, err := e.d.List(ctx, e.install)
	if err != nil {
		t.Fatal(err)
	}
	got := map[string]ContainerInfo{}
	for _, c := range list {
		got[c.ID] = c
	}
	if _, ok := got[otherID]; ok || len(got) != 2 || !got[mine.ID].Running || got[createdID].State != "created" {
		t.Errorf("List = %+v, want mine (running) and created, not other", list)
	}

	if err := e.d.Stop(ctx, otherID, time.Second); err != nil {
		t.Fatal(err)
	}
	if err := e.d.Stop(ctx, mine.ID, 5*time.Second); err != nil {
		t.Fatal(err)
	}

	seenStart := false
	for {
		select {
		case ev, ok := <-events:
			if !ok {
				t.Fatal("event stream closed early")
			}
			if ev.ContainerID == otherID {
				t.Errorf("event of another install: %+v", ev)
			}
			if ev.ContainerID != mine.ID {
				continue
			}
			if ev.WorkbenchID != "mine" || ev.Time.IsZero() {
				t.Errorf("event %+v", ev)
			}
			switch ev.Action {
			case ActionStart:
				seenStart = true
			case ActionDie:
				if !seenStart {
					t.Error("die before start")
				}
				if ev.ExitCode != 0 {
					t.Errorf("exit code %d, want 0 (fake exits cleanly on SIGTERM)", ev.ExitCode)
				}
				stopEvents()
				// The stream ends without an error when its context does.
				for range events {
				}
				if err, ok := <-errs; ok && err != nil {
					t.Errorf("error after cancel: %v", err)
				}
				return
			}
		case err := <-errs:
			t.Fatalf("events: %v", err)
		case <-ctx.Done():
			t.Fatal("no die event")
		}
	}
}
