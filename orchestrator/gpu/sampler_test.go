package gpu

import (
	"context"
	"errors"
	"sync"
	"testing"
	"time"
)

// countingInventory returns, for each GPU, a sample whose UtilPercent is the
// number of the Sample call, so tests can tell readings apart.
type countingInventory struct {
	nullInventory
	mu    sync.Mutex
	calls uint32
	uuids []string
	fail  bool
}

func (c *countingInventory) Sample(ctx context.Context) ([]Sample, error) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.fail {
		return nil, errors.New("boom")
	}
	c.calls++
	var out []Sample
	for _, u := range c.uuids {
		out = append(out, Sample{UUID: u, At: time.Now(), UtilPercent: c.calls})
	}
	return out, nil
}

func utils(s []Sample) []uint32 {
	var out []uint32
	for _, x := range s {
		out = append(out, x.UtilPercent)
	}
	return out
}

func TestSamplerRingAndCopies(t *testing.T) {
	inv := &countingInventory{uuids: []string{"GPU-a", "GPU-b"}}
	s := NewSampler(inv, time.Hour, 3, quietLogger())
	if _, ok := s.Latest("GPU-a"); ok {
		t.Error("Latest before any sample")
	}
	for i := 0; i < 5; i++ {
		if err := s.Collect(context.Background()); err != nil {
			t.Fatal(err)
		}
	}
	h := s.History("GPU-a")
	if got := utils(h); len(got) != 3 || got[0] != 3 || got[1] != 4 || got[2] != 5 {
		t.Fatalf("history = %v, want [3 4 5] (capacity 3, oldest first)", got)
	}
	if got := utils(s.History("GPU-b")); len(got) != 3 || got[2] != 5 {
		t.Errorf("GPU-b history = %v", got)
	}
	h[0].UtilPercent = 99
	if s.History("GPU-a")[0].UtilPercent != 3 {
		t.Error("History returned the internal buffer, not a copy")
	}
	if l, ok := s.Latest("GPU-a"); !ok || l.UtilPercent != 5 {
		t.Errorf("Latest = %+v, %v", l, ok)
	}
	if s.History("GPU-unknown") != nil {
		t.Error("history for unknown GPU")
	}

	// A failed reading keeps the history as it was.
	inv.mu.Lock()
	inv.fail = true
	inv.mu.Unlock()
	if err := s.Collect(context.Background()); err == nil {
		t.Error("Collect hid the inventory error")
	}
	if got := utils(s.History("GPU-a")); len(got) != 3 || got[2] != 5 {
		t.Errorf("history after failure = %v", got)
	}
}

func TestSamplerRun(t *testing.T) {
	inv := mustNew(t, "mock:dgxh200")
	devs, err := inv.Devices(testCtx(t))
	if err != nil {
		t.Fatal(err)
	}
	s := NewSampler(inv, 5*time.Millisecond, 4, quietLogger())
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan struct{})
	go func() { s.Run(ctx); close(done) }()

	deadline := time.Now().Add(time.Minute)
	for len(s.History(devs[7].UUID)) < 4 {
		if time.Now().After(deadline) {
			t.Fatalf("history did not fill: %d samples", len(s.History(devs[7].UUID)))
		}
		time.Sleep(2 * time.Millisecond)
	}
	// Four more ticks (the whole ring replaced): it must stay at capacity.
	full := s.History(devs[7].UUID)
	for h := full; !h[0].At.After(full[len(full)-1].At); h = s.History(devs[7].UUID) {
		if time.Now().After(deadline) {
			t.Fatalf("the ring did not turn over: %v", h)
		}
		time.Sleep(2 * time.Millisecond)
	}
	for _, d := range devs {
		h := s.History(d.UUID)
		if len(h) != 4 {
			t.Errorf("GPU %s: %d samples, want capacity 4", d.UUID, len(h))
		}
		for i := 1; i < len(h); i++ {
			if h[i].At.Before(h[i-1].At) {
				t.Errorf("GPU %s history not oldest first", d.UUID)
			}
		}
	}
	cancel()
	select {
	case <-done:
	case <-time.After(time.Minute):
		t.Fatal("Run did not return after cancel")
	}
}

// Run takes its first reading at once, not after the first interval.
func TestSamplerRunSamplesImmediately(t *testing.T) {
	inv := &countingInventory{uuids: []string{"GPU-a"}}
	s := NewSampler(inv, time.Hour, 10, nil)
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	go s.Run(ctx)
	deadline := time.Now().Add(2 * time.Second)
	for {
		if _, ok := s.Latest("GPU-a"); ok {
			return
		}
		if time.Now().After(deadline) {
			t.Fatal("no sample shortly after Run started")
		}
		time.Sleep(time.Millisecond)
	}
}

// After failed collections the last good reading is kept, but once it is
// older than the maximum age (two intervals by default) it is no current
// reading: Latest gives it with every figure unread ("could not read",
// never idle, never the stale number), until a collection succeeds again.
func TestSamplerLatestGoesStaleAfterFailedCollections(t *testing.T) {
	inv := &countingInventory{uuids: []string{"GPU-a"}}
	s := NewSampler(inv, 15*time.Second, 10, quietLogger())
	if s.MaxAge() != 30*time.Second {
		t.Fatalf("default max age %v, want two intervals (30s)", s.MaxAge())
	}
	t0 := time.Date(2026, 3, 2, 12, 0, 0, 0, time.UTC)
	now := t0
	s.SetClock(func() time.Time { return now })
	s.SetIdleThreshold(5)
	if err := s.Collect(context.Background()); err != nil {
		t.Fatal(err)
	}
	setFail := func(f bool) {
		inv.mu.Lock()
		inv.fail = f
		inv.mu.Unlock()
	}
	setFail(true)
	for _, tc := range []struct {
		after time.Duration
		fresh bool
	}{{15 * time.Second, true}, {30 * time.Second, true}, {31 * time.Second, false}, {10 * time.Minute, false}} {
		now = t0.Add(tc.after)
		if err := s.Collect(context.Background()); err == nil {
			t.Fatal("Collect hid the inventory error")
		}
		l, ok := s.Latest("GPU-a")
		if !ok {
			t.Fatalf("%v after the last good reading: Latest has nothing", tc.after)
		}
		if got := s.Fresh(t0); got != tc.fresh {
			t.Errorf("%v after: Fresh = %v, want %v", tc.after, got, tc.fresh)
		}
		if tc.fresh {
			if !l.Readable(FieldUtil) || l.UtilPercent != 1 {
				t.Errorf("%v after: Latest = %+v, want the last good reading (1%%)", tc.after, l)
			}
			continue
		}
		if l.Unread != FieldAll || l.UtilPercent != 0 || l.UUID != "GPU-a" || !l.At.Equal(t0) || len(l.Processes) != 0 {
			t.Errorf("%v after: stale Latest = %+v, want every field unread, stamped with its own time", tc.after, l)
		}
		if _, idle := s.IdleSince("GPU-a"); idle {
			t.Errorf("%v after: a GPU that could not be read is idle", tc.after)
		}
	}
	// The history itself keeps the good reading (sparklines), and a
	// successful collection makes the GPU current again.
	if h := s.History("GPU-a"); len(h) != 1 || !h[0].Readable(FieldUtil) {
		t.Errorf("history after failures = %+v", h)
	}
	setFail(false)
	if err := s.Collect(context.Background()); err != nil {
		t.Fatal(err)
	}
	if l, _ := s.Latest("GPU-a"); !l.Readable(FieldUtil) || l.UtilPercent != 2 || !l.At.Equal(now) {
		t.Errorf("after recovery Latest = %+v", l)
	}
	// No limit when the max age is switched off.
	s.SetMaxAge(0)
	now = now.Add(24 * time.Hour)
	if l, _ := s.Latest("GPU-a"); !l.Readable(FieldUtil) {
		t.Errorf("max age 0 still hides the reading: %+v", l)
	}
}
