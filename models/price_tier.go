package models

import (
	"context"
	"strings"
	"time"

	"workbench/models/pricing"
)

// PriceTier is one version of a tier's discount off the GPU rates. Rows are
// only added, like rates: a change takes effect now or later.
type PriceTier struct {
	ID            int64     `gorm:"primaryKey" json:"id"`
	Tier          string    `json:"tier"`
	DiscountPct   int64     `gorm:"column:discount_pct" json:"discount_percent"`
	EffectiveFrom time.Time `json:"effective_from"`
	IsDefault     bool      `json:"is_default"`
	CreatedBy     string    `json:"created_by"`
	CreatedAt     time.Time `json:"created_at"`
}

// AddPriceTier appends a discount version of a tier.
func (s *Store) AddPriceTier(ctx context.Context, t *PriceTier) error {
	t.Tier = strings.TrimSpace(t.Tier)
	if t.Tier != pricing.TierPreemptible {
		return invalid("tier", "the only price tier is %q", pricing.TierPreemptible)
	}
	if t.DiscountPct < 0 || t.DiscountPct > 100 {
		return invalid("discount_percent", "must be between 0 and 100")
	}
	now := s.now()
	if t.EffectiveFrom.IsZero() {
		t.EffectiveFrom = now
	}
	if t.EffectiveFrom.Before(now) {
		return invalid("effective_from", "cannot be in the past: a price change never reprices time already used")
	}
	t.EffectiveFrom = t.EffectiveFrom.UTC()
	t.ID, t.CreatedAt = 0, now
	return s.db.WithContext(ctx).Create(t).Error
}

// PriceTierHistory lists every tier version, newest first.
func (s *Store) PriceTierHistory(ctx context.Context) ([]PriceTier, error) {
	var out []PriceTier
	err := s.db.WithContext(ctx).Order("effective_from DESC, id DESC").Find(&out).Error
	return out, err
}

// addTierSchedules adds, for every tier and GPU model, the discounted GPU
// schedule under pricing.TierKey, so every price computation (ledger, live
// cost, calculator) prices a tiered run with the same code.
func (s *Store) addTierSchedules(ctx context.Context, scheds map[string]pricing.Schedule) error {
	tiers, err := s.PriceTierHistory(ctx)
	if err != nil {
		return err
	}
	disc := map[string]pricing.Schedule{}
	for _, t := range tiers {
		disc[t.Tier] = append(disc[t.Tier], pricing.Rate{Effective: t.EffectiveFrom, Micros: t.DiscountPct})
	}
	// Every unit kind's rate (whole GPUs, MIG profiles, slices) has its
	// discounted twin: a preemptible MIG instance or slice is discounted
	// like a whole GPU. Collected first: the map grows as it is filled.
	type base struct {
		resource, model string
		sched           pricing.Schedule
	}
	var bases []base
	for key, sched := range scheds {
		resource, model, ok := strings.Cut(key, "|")
		if !ok || !pricing.IsUnit(resource) {
			continue
		}
		bases = append(bases, base{resource, model, sched})
	}
	for _, b := range bases {
		for tier, d := range disc {
			scheds[pricing.UnitTierKey(b.resource, tier, b.model)] = pricing.Discounted(b.sched, d)
		}
	}
	return nil
}
