package models

import (
	"context"
	"strings"
	"testing"

	"workbench/models/pricing"
)

// priceListReads counts the reads of the price tables among qs.
func priceListReads(qs []capturedQuery) int {
	n := 0
	for _, q := range qs {
		if strings.Contains(q.sql, "price_rates") || strings.Contains(q.sql, "price_tiers") {
			n++
		}
	}
	return n
}

// A snapshot and a transaction that has not written the price list read
// the shared cache instead of the whole list from SQLite (issue 15: every
// page with the quota banner prices the month in a snapshot, and the
// launch transaction checks the budget; both read the list afresh).
func TestSnapshotAndTransactionReadTheSharedPriceList(t *testing.T) {
	s, _ := newTestStore(t)
	ctx := context.Background()
	if err := s.SeedDefaultPrices(ctx, []string{"NVIDIA H100 80GB HBM3"}); err != nil {
		t.Fatal(err)
	}
	want, err := s.Schedules(ctx) // warms the shared cache
	if err != nil {
		t.Fatal(err)
	}
	var inSnap, inTx map[string]pricing.Schedule
	reads := captureReads(t, s, func() {
		if err := s.Snapshot(ctx, func(snap *Store) error {
			inSnap, err = snap.Schedules(ctx)
			return err
		}); err != nil {
			t.Fatal(err)
		}
		if err := s.InTx(ctx, func(tx *Store) error {
			inTx, err = tx.Schedules(ctx)
			return err
		}); err != nil {
			t.Fatal(err)
		}
	})
	if n := priceListReads(reads); n != 0 {
		t.Errorf("a snapshot and a transaction read the price list %d times with the shared cache valid, want 0", n)
	}
	if len(inSnap) != len(want) || len(inTx) != len(want) {
		t.Errorf("schedules: %d in the snapshot, %d in the transaction, want %d", len(inSnap), len(inTx), len(want))
	}
}

// A transaction that wrote the price list reads its own write, even when
// another connection reloaded the shared cache after the write but before
// the commit (it read the old list under the new version).
func TestTransactionReadsItsOwnPriceWrite(t *testing.T) {
	s, _ := newTestStore(t)
	ctx := context.Background()
	const model = "NVIDIA H100 80GB HBM3"
	if err := s.SeedDefaultPrices(ctx, []string{model}); err != nil {
		t.Fatal(err)
	}
	key := PriceKey(pricing.GPU, model)
	before, err := s.Schedules(ctx)
	if err != nil {
		t.Fatal(err)
	}
	n := len(before[key])
	err = s.InTx(ctx, func(tx *Store) error {
		if err := tx.AddPriceRate(ctx, &PriceRate{Resource: pricing.GPU, GPUModel: model, Micros: 7_000_000}); err != nil {
			return err
		}
		// Another request reloads the shared cache between the write and
		// the commit: it sees the old list, at the new version.
		if outside, err := s.Schedules(ctx); err != nil || len(outside[key]) != n {
			t.Fatalf("outside the transaction: %d rates (err %v), want the %d committed", len(outside[key]), err, n)
		}
		in, err := tx.Schedules(ctx)
		if err != nil {
			return err
		}
		if len(in[key]) != n+1 {
			t.Errorf("the transaction sees %d rates for %s after adding one to %d: it read the shared cache", len(in[key]), key, n)
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	after, _ := s.Schedules(ctx)
	if len(after[key]) != n+1 {
		t.Errorf("after the commit: %d rates, want %d", len(after[key]), n+1)
	}
}
