package web_test

import (
	"bytes"
	"context"
	"net/http"
	"strings"
	"testing"
	"time"

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

	p.srv.Manager.MeterStorage(ctx)
	open, err := p.srv.Store.OpenStorageIntervals(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if len(open) != 1 {
		t.Fatalf("%d open storage intervals, want 1: %+v", len(open), open)
	}
	var iv struct {
		name string
		size int64
	}
	for name, s := range open {
		iv.name, iv.size = name, s.SizeMilliGiB
	}
	if !strings.HasPrefix(iv.name, "wb-home-") || iv.size < 3*1000/1024 {
		t.Fatalf("volume %s metered at %d milli-GiB, want ≥ 3 MiB", iv.name, iv.size)
	}

	// A second sighting 90 s later on the manager's clock: the volume is
	// billed from its first sighting to its last (a single sighting is a
	// span of zero seconds).
	later := time.Now().Add(90 * time.Second)
	p.srv.Manager.SetClock(func() time.Time { return later })
	p.srv.Manager.MeterStorage(ctx)
	p.srv.Manager.SetClock(time.Now)

	// Deleting the data removes the volume: the next measurement closes the
	// interval, and billing settles it.
	p.api("POST", "/api/v1/workbenches/"+id+"/stop", alice, "")
	waitState(t, p, alice, id, "stopped")
	if code, body := p.api("DELETE", "/api/v1/workbenches/"+id+"?delete_data=true", alice, ""); code != 204 {
		t.Fatalf("delete with data: %d %v", code, body)
	}
	p.srv.Manager.MeterStorage(ctx)
	if open, _ := p.srv.Store.OpenStorageIntervals(ctx); len(open) != 0 {
		t.Fatalf("storage still metered after the volume was deleted: %+v", open)
	}
	if _, err := p.srv.Manager.Billing().BillOnce(ctx); err != nil {
		t.Fatal(err)
	}
	lines, err := p.srv.Store.Statement(ctx, 0, t0(), t1())
	if err != nil {
		t.Fatal(err)
	}
	var storage int
	for _, l := range lines {
		if l.Resource != pricing.Storage {
			continue
		}
		storage++
		if l.QuantityMilli != iv.size || l.Note != iv.name {
			t.Errorf("storage line %+v, want quantity %d of %s", l, iv.size, iv.name)
		}
		if l.Seconds < 89 || l.Seconds > 100 {
			t.Errorf("storage line over %d s, want the 90 s between the two sightings", l.Seconds)
		}
		if want := pricing.Amount(l.RateMicros, l.QuantityMilli, l.Seconds, true); l.AmountMicros != want {
			t.Errorf("storage amount %d, want %d", l.AmountMicros, want)
		}
	}
	if storage == 0 {
		t.Fatalf("no storage lines in the ledger: %+v", lines)
	}
	p.srv.Manager.Wait()
}
