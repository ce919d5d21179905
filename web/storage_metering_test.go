package web_test

import (
	"bytes"
	"context"
	"net/http"
	"strings"
	"testing"
	"time"

	"workbench/models"
	"workbench/models/pricing"
)

// A home volume is metered while it exists: its measured size goes into a
// storage interval, and deleting the data closes the interval and settles it
// in the ledger at the storage rate (per GiB-month, pro rata per second).
func TestHomeVolumeStorageIsMetered(t *testing.T) {
	p, _ := enginePortal(t)
	ctx := context.Background()
	alice := tokenFor(t, p, "alice", "user")
	code, wb := p.api("POST", "/api/v1/workbenches", alice, `{"name":"data","image":"fake","flavor":"CPU small"}`)
	if code != 202 {
		t.Fatalf("launch: %d %v", code, wb)
	}
	launched := time.Now().Truncate(time.Second) // the engine's creation times have whole seconds
	id := wb["id"].(string)
	waitState(t, p, alice, id, "running")

	// Put 3 MiB into the home volume through the proxy (the fake Jupyter
	// takes 1 MiB per file).
	ac := p.client()
	p.login(ac, "alice", "alice-password")
	for _, name := range []string{"a.bin", "b.bin", "c.bin"} {
		req, _ := http.NewRequest("POST", p.ts.URL+"/wb/"+id+"/api/homefile?name="+name, bytes.NewReader(bytes.Repeat([]byte("x"), 1<<20)))
		req.Header.Set("Origin", p.ts.URL)
		if res, err := ac.Do(req); err != nil || res.StatusCode >= 300 {
			t.Fatalf("write: %v %v", res, err)
		}
	}

	// meter runs storage metering passes until the open intervals satisfy
	// done. A pass can measure nothing: the engine refuses a disk-usage
	// query while another one runs (other portals and tests share it), or
	// leaves a volume unmeasured; MeterStorage then logs and skips. Bounded
	// by two minutes, for an engine that never answers.
	meter := func(what string, done func(map[string]models.StorageInterval) bool) map[string]models.StorageInterval {
		t.Helper()
		for deadline := time.Now().Add(2 * time.Minute); ; time.Sleep(200 * time.Millisecond) {
			p.srv.Manager.MeterStorage(ctx)
			open, err := p.srv.Store.OpenStorageIntervals(ctx)
			if err != nil {
				t.Fatal(err)
			}
			if done(open) {
				return open
			}
			if time.Now().After(deadline) {
				t.Fatalf("%s: open storage intervals %+v after two minutes of metering", what, open)
			}
		}
	}
	var iv models.StorageInterval
	firstLook := time.Now()
	meter("the first sighting", func(open map[string]models.StorageInterval) bool {
		for _, s := range open {
			iv = s
		}
		return len(open) == 1 && iv.SizeMilliGiB >= 3*1000/1024
	})
	if !strings.HasPrefix(iv.Volume, "wb-home-") {
		t.Fatalf("metered volume %s, want the home volume", iv.Volume)
	}
	// Billed from the volume's creation (at the launch), not from the
	// first measurement, which may come a metering period later.
	if iv.StartedAt.Before(launched.Add(-time.Second)) || !iv.StartedAt.Before(firstLook) {
		t.Fatalf("storage interval from %s; want from the volume's creation, between the launch (%s) and the first look (%s)", iv.StartedAt, launched, firstLook)
	}

	// A second sighting 90 s later on the manager's clock: the volume is
	// billed from its first sighting to its last (a single sighting is a
	// span of zero seconds).
	later := time.Now().Add(90 * time.Second)
	p.srv.Manager.SetClock(func() time.Time { return later })
	meter("the second sighting", func(open map[string]models.StorageInterval) bool {
		if s, ok := open[iv.Volume]; ok {
			iv = s
		}
		return !iv.HeartbeatAt.Before(later.Add(-time.Second))
	})
	if span := iv.HeartbeatAt.Sub(iv.StartedAt); span < 89*time.Second {
		t.Fatalf("sighted from %s to %s: want at least the 90 s between the two sightings", iv.StartedAt, iv.HeartbeatAt)
	}

	// Deleting the data removes the volume and ends its interval at the
	// removal (30 s after the last sighting on the manager's clock), not
	// at the last sighting; billing settles it.
	p.api("POST", "/api/v1/workbenches/"+id+"/stop", alice, "")
	waitState(t, p, alice, id, "stopped")
	removed := later.Add(30 * time.Second)
	p.srv.Manager.SetClock(func() time.Time { return removed })
	if code, body := p.api("DELETE", "/api/v1/workbenches/"+id+"?delete_data=true", alice, ""); code != 204 {
		t.Fatalf("delete with data: %d %v", code, body)
	}
	meter("after the volume was deleted", func(open map[string]models.StorageInterval) bool { return len(open) == 0 })
	p.srv.Manager.SetClock(time.Now)
	closed, err := p.srv.Store.StorageToBill(ctx)
	if err != nil || len(closed) != 1 || closed[0].EndedAt == nil || !closed[0].EndedAt.Equal(removed) {
		t.Fatalf("closed storage interval %+v (%v), want it ended at the removal %s", closed, err, removed)
	}
	span := int64((closed[0].EndedAt.Sub(closed[0].StartedAt) + time.Second - 1) / time.Second)
	if _, err := p.srv.Manager.Billing().BillOnce(ctx); err != nil {
		t.Fatal(err)
	}
	lines, err := p.srv.Store.Statement(ctx, 0, t0(), t1())
	if err != nil {
		t.Fatal(err)
	}
	// The span is billed in lines cut at each wall-clock hour (and price
	// change), so a run of the suite across the hour gets two lines: their
	// seconds add up to the span, its partial second rounded up once.
	// The lines carry their remainders: together they cost the span priced
	// whole.
	var storage int
	var billed, amount, rate int64
	for _, l := range lines {
		if l.Resource != pricing.Storage {
			continue
		}
		storage++
		billed += l.Seconds
		amount += l.AmountMicros
		if l.QuantityMilli != iv.SizeMilliGiB || l.Note != iv.Volume || (rate != 0 && l.RateMicros != rate) {
			t.Errorf("storage line %+v, want quantity %d of %s at one rate", l, iv.SizeMilliGiB, iv.Volume)
		}
		rate = l.RateMicros
	}
	if storage == 0 {
		t.Fatalf("no storage lines in the ledger: %+v", lines)
	}
	if want := pricing.Amount(rate, iv.SizeMilliGiB, billed, true); amount != want {
		t.Errorf("storage lines cost %d, want %d (%d s priced whole)", amount, want, billed)
	}
	if billed < span-1 || billed > span+1 {
		t.Errorf("storage lines over %d s in all, want the %d s from the volume's creation to its removal", billed, span)
	}
	p.srv.Manager.Wait()
}
