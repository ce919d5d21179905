package orchestrator

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"strings"
	"sync"
	"testing"
	"time"

	"workbench/orchestrator/gpu"
	"workbench/orchestrator/runtime"
	"workbench/orchestrator/runtime/memruntime"
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
	if !r.rt.HasVolume(next.leaseName()) || !r.rt.HasVolume(next.beatName(next.lease.nonce, 0)) {
		t.Fatal("a failed start removed the live holder's lease")
	}
}

// A live holder's beat is found even by a newcomer that looks between the
// removal of a beat volume and its re-creation (a busy engine makes that
// gap long): the newcomer is refused, the lease stays with the holder. A
// CI run once saw a copy of the data take a live portal's lease over in
// that gap, and remove its workbench as an orphan.
func TestLeaseBeatGapDoesNotHandOverALiveLease(t *testing.T) {
	r := newMemRig(t)
	ctx := context.Background()
	beat, stale := leaseBeat, leaseStale
	leaseBeat, leaseStale = 0, time.Second // the newcomer gives up after a second
	t.Cleanup(func() { leaseBeat, leaseStale = beat, stale })

	// The lease was taken an hour ago; the latest beat is dated ahead, so
	// that no stall of this machine makes it look stale.
	r.rt.SetClock(func() time.Time { return time.Now().Add(-time.Hour) })
	if err := r.m.AcquireLease(ctx); err != nil {
		t.Fatal(err)
	}
	r.rt.SetClock(func() time.Time { return time.Now().Add(time.Hour) })
	if err := r.m.beat(ctx); err != nil {
		t.Fatal(err)
	}
	// The next beat is caught between its removal and its creation.
	r.rt.FailOnce("CreateVolume", errors.New("engine busy"))
	if err := r.m.beat(ctx); err == nil {
		t.Fatal("the interrupted beat reported success")
	}

	var said bytes.Buffer
	log := slog.New(slog.NewTextHandler(&said, nil))
	newcomer := NewManager(r.store, r.m.pool, r.rt, "memtest", Options{}, log)
	t.Cleanup(newcomer.Wait)
	var le *LeaseError
	if err := newcomer.AcquireLease(ctx); !errors.As(err, &le) {
		t.Fatalf("the newcomer: %v, want a LeaseError naming the live holder", err)
	}
	// While it waits it says why (the wait looked like a hung start).
	if n := strings.Count(said.String(), "another portal holds it; waiting"); n != 1 {
		t.Errorf("the newcomer said it waits %d times, want once:\n%s", n, said.String())
	}
	if le.Holder != r.m.lease.nonce {
		t.Fatalf("the refusal names holder %q, want %q", le.Holder, r.m.lease.nonce)
	}
	if v, err := r.rt.InspectVolume(ctx, r.m.leaseName()); err != nil || v.Labels["workbench.lease.holder"] != r.m.lease.nonce {
		t.Fatalf("the lease changed hands: %+v %v", v.Labels, err)
	}
	// The holder's next beat fills the slot it failed to renew.
	if err := r.m.beat(ctx); err != nil {
		t.Fatal(err)
	}
	if !r.rt.HasVolume(r.m.beatName(r.m.lease.nonce, 0)) || !r.rt.HasVolume(r.m.beatName(r.m.lease.nonce, 1)) {
		t.Fatal("after a failed beat and a good one, the holder lacks a beat volume")
	}
}

// A portal started while the container engine is down (restarting, or
// not installed yet) says so once, as a warning, and says when it takes
// the lease once the engine answers: not an ERROR at every retry, which a
// GPU host without an engine showed every 20 s.
func TestLeaseWaitForTheEngineIsLoggedOnce(t *testing.T) {
	stale := leaseStale
	leaseStale = 5 * time.Millisecond // retry quickly
	t.Cleanup(func() { leaseStale = stale })
	var logs lockedLog
	log := slog.New(slog.NewTextHandler(&logs, nil))
	store := openStore(t, log)
	inv, err := gpu.New(gpu.Mode{Kind: gpu.KindNone})
	if err != nil {
		t.Fatal(err)
	}
	rt := memruntime.New()
	rt.Fail("CreateVolume", fmt.Errorf("create volume: %w: cannot connect", runtime.ErrEngineUnavailable))
	m := NewManager(store, NewPool(inv, nil, store), rt, "enginedown", Options{}, log)
	m.UseFirewall(&recordingFirewall{})
	ctx, stop := context.WithCancel(context.Background())
	done := make(chan struct{})
	go func() { m.Run(ctx); close(done) }()
	t.Cleanup(func() { stop(); <-done })

	waitFor(t, func() bool { return rt.Calls("CreateVolume") >= 5 })
	rt.Fail("CreateVolume", nil) // the engine is back
	waitFor(t, func() bool { held, _ := m.LeaseStatus(); return held })
	stop()
	<-done

	out := logs.String()
	// What the duties log as the test stops them is not this test's
	// business: look at the wait only.
	waiting, _, _ := strings.Cut(out, "install lease taken")
	if n := strings.Count(waiting, "level=ERROR"); n != 0 {
		t.Errorf("%d ERROR lines while the engine was down:\n%s", n, out)
	}
	if n := strings.Count(out, "waiting for the container engine"); n != 1 {
		t.Errorf("the wait for the engine logged %d times, want once:\n%s", n, out)
	}
	if !strings.Contains(out, "install lease taken: reconciling") {
		t.Errorf("no line saying the lease was taken once the engine answered:\n%s", out)
	}
}

// lockedLog is a log sink safe for the manager's goroutines.
type lockedLog struct {
	mu  sync.Mutex
	buf strings.Builder
}

func (l *lockedLog) Write(p []byte) (int, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.buf.Write(p)
}

func (l *lockedLog) String() string {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.buf.String()
}
