package orchestrator

import (
	"testing"
	"time"

	"workbench/models"
	"workbench/models/pricing"
)

// A preemptible run is billed at the preemptible tier (70 % off the GPU
// rate by default, versioned: a discount change mid-run splits the line),
// its CPU and memory at the usual rates, to the end of its interval.
func TestBillingPreemptibleTier(t *testing.T) {
	f := newBillFixture(t)
	if err := f.store.AddPriceTier(f.ctx, &models.PriceTier{Tier: pricing.TierPreemptible, DiscountPct: 50, EffectiveFrom: at("10:30:00"), CreatedBy: "test"}); err != nil {
		t.Fatal(err)
	}
	wb := f.open(at("10:00:00"))
	std := f.open(at("10:00:00"))
	if err := f.store.SetIntervalTier(f.ctx, wb, pricing.TierPreemptible); err != nil {
		t.Fatal(err)
	}
	f.close(wb, at("11:00:00"))
	f.close(std, at("11:00:00"))
	b := NewBilling(f.store, 60*time.Second)
	f.bill(b, at("12:00:00"))
	var gpu []models.LedgerEntry
	for _, l := range f.statement(billDay, billDay.AddDate(0, 0, 1)) {
		if l.Resource == pricing.GPU && l.WorkbenchID == wb {
			gpu = append(gpu, l)
		}
	}
	checkLines(t, gpu, []wantLine{
		{pricing.GPU, "10:00:00", "10:30:00", 1800, h100Rate * 30 / 100, pricing.Amount(h100Rate*30/100, 2000, 1800, false)},
		{pricing.GPU, "10:30:00", "11:00:00", 1800, h100Rate * 50 / 100, pricing.Amount(h100Rate*50/100, 2000, 1800, false)},
	})
	if err := f.store.AddPriceTier(f.ctx, &models.PriceTier{Tier: pricing.TierPreemptible, DiscountPct: 50, EffectiveFrom: at("00:00:00").Add(-48 * time.Hour)}); err == nil {
		t.Fatal("a tier change in the past was accepted")
	}
	for _, l := range f.statement(billDay, billDay.AddDate(0, 0, 1)) {
		if l.Resource == pricing.GPU && l.WorkbenchID == std && l.RateMicros != h100Rate {
			t.Fatalf("a standard run was priced at %d", l.RateMicros)
		}
	}
}
