package models

import (
	"context"
	"slices"
	"testing"
)

// A value read by another connection while a transaction that changes it
// is not yet committed is not kept once it commits: the version moved at
// the statement, the read saw the old rows under the new version, and a
// flavor saved with its audit row (one transaction) was missing from the
// launch form for up to cacheTTL.
func TestCacheDropsWhatWasReadBeforeTheCommit(t *testing.T) {
	s, _ := newTestStore(t)
	ctx := context.Background()
	names := func() []string {
		list, err := s.ListFlavors(ctx, false)
		if err != nil {
			t.Fatal(err)
		}
		var out []string
		for _, f := range list {
			out = append(out, f.Name)
		}
		return out
	}
	err := s.InTx(ctx, func(tx *Store) error {
		if err := tx.CreateFlavor(ctx, &Flavor{Name: "late", CPUMilli: 1000, MemoryMiB: 1024, Enabled: true}); err != nil {
			return err
		}
		// Another request reads (and caches) the list between the write
		// and the commit.
		if slices.Contains(names(), "late") {
			t.Error("a flavor not yet committed is visible outside its transaction")
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	if !slices.Contains(names(), "late") {
		t.Fatal("the committed flavor is missing: the list read before the commit was kept")
	}
}
