package orchestrator

import (
	"context"
	"errors"
	"io"
	"log/slog"
	"testing"
)

// A portal told to stop while it takes the install lease (after the
// engine created the lease, before its first beat) gives the lease back:
// the next portal, on another host or data directory, takes it at once
// instead of waiting for it to go stale. A CI run's Kubernetes test once
// saw the successor still waiting when the test looked.
func TestLeaseOfAStartCutShortIsGivenBack(t *testing.T) {
	r := newMemRig(t)
	ctx := context.Background()
	r.rt.FailOnce("RemoveVolume", context.Canceled) // the first beat: the shutdown arrives here
	if err := r.m.AcquireLease(ctx); !errors.Is(err, context.Canceled) {
		t.Fatalf("acquire cut short: %v, want context.Canceled", err)
	}
	if held, _ := r.m.LeaseStatus(); held {
		t.Fatal("a lease not fully taken counts as held")
	}
	if r.rt.HasVolume(r.m.leaseName()) {
		t.Fatal("the lease of a start cut short was left behind for the next portal to wait out")
	}

	log := slog.New(slog.NewTextHandler(io.Discard, nil))
	next := NewManager(r.store, r.m.pool, r.rt, "memtest", Options{}, log)
	t.Cleanup(next.Wait)
	if err := next.AcquireLease(ctx); err != nil {
		t.Fatalf("the next portal: %v", err)
	}
	if held, _ := next.LeaseStatus(); !held {
		t.Fatal("the next portal does not hold the lease")
	}
	// And a holder's lease is not given away by another's failed start.
	r.rt.FailOnce("CreateVolume", context.Canceled)
	if err := r.m.AcquireLease(ctx); !errors.Is(err, context.Canceled) {
		t.Fatalf("second acquire: %v", err)
	}
	if !r.rt.HasVolume(next.leaseName()) || !r.rt.HasVolume(next.beatName(next.lease.nonce)) {
		t.Fatal("a failed start removed the live holder's lease")
	}
}
