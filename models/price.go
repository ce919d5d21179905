package models

import (
	"context"
	"strings"
	"time"

	"workbench/models/pricing"
)

// PriceRate is one version of one rate. Rows are only ever added: a change
// is a new row with a later effective time, so past charges keep the rate
// they were priced at.
type PriceRate struct {
	ID            int64     `gorm:"primaryKey" json:"id"`
	Resource      string    `json:"resource"`
	GPUModel      string    `gorm:"column:gpu_model" json:"gpu_model"`
	Micros        int64     `json:"rate_micros"`
	EffectiveFrom time.Time `json:"effective_from"`
	IsDefault     bool      `json:"is_default"`
	CreatedBy     string    `json:"created_by"`
	CreatedAt     time.Time `json:"created_at"`
}

// Key names the schedule a rate belongs to.
func (r PriceRate) Key() string { return PriceKey(r.Resource, r.GPUModel) }

// PriceKey is the schedule key of a resource (and GPU model for GPUs).
func PriceKey(resource, gpuModel string) string { return pricing.ScheduleKey(resource, gpuModel) }

// maxRateMicros bounds a rate (a million per unit-hour) so that pricing
// arithmetic stays far inside int64.
const maxRateMicros = 1_000_000 * 1_000_000

// AddPriceRate validates and appends a rate. It takes effect now or later,
// never earlier: a rate change never rewrites a past charge.
func (s *Store) AddPriceRate(ctx context.Context, r *PriceRate) error {
	if err := s.CheckPriceRate(ctx, r); err != nil {
		return err
	}
	r.ID, r.CreatedAt = 0, s.now()
	return s.db.WithContext(ctx).Create(r).Error
}

// CheckPriceRate validates and normalises r as AddPriceRate would, without
// storing it: a request with several rates checks them all first.
func (s *Store) CheckPriceRate(ctx context.Context, r *PriceRate) error {
	switch r.Resource {
	case pricing.GPU:
		if strings.TrimSpace(r.GPUModel) == "" {
			return invalid("gpu_model", "a GPU rate needs the GPU model")
		}
	case pricing.CPU, pricing.Memory, pricing.Storage:
		r.GPUModel = ""
	default:
		return invalid("resource", "must be gpu, cpu, memory or storage")
	}
	if r.Micros < 0 || r.Micros > maxRateMicros {
		return invalid("rate", "must be between 0 and 1,000,000 per unit")
	}
	now := s.now()
	if r.EffectiveFrom.IsZero() {
		r.EffectiveFrom = now
	}
	// Strictly now or later (SPEC §6 rule 12): a rate from even a second
	// ago would reprice time already used, and a running workbench's live
	// cost would jump.
	if r.EffectiveFrom.Before(now) {
		return invalid("effective_from", "cannot be in the past (it is now %s UTC): a rate change never reprices time already used; leave it empty for now",
			now.UTC().Format("2006-01-02 15:04:05"))
	}
	// Kept to the nanosecond: billing cuts a run on its own second grid
	// (pricing.SplitRun), so a change inside a second neither loses nor
	// adds one, and "now" is exactly now, not a moment before.
	r.EffectiveFrom = r.EffectiveFrom.UTC()
	return s.checkRateBounds(ctx, r)
}

// PriceHistory returns every rate version, newest first.
func (s *Store) PriceHistory(ctx context.Context) ([]PriceRate, error) {
	var out []PriceRate
	err := s.db.WithContext(ctx).Order("effective_from DESC, id DESC").Find(&out).Error
	return out, err
}

// Schedules returns the rate history of every resource, keyed by PriceKey.
func (s *Store) Schedules(ctx context.Context) (map[string]pricing.Schedule, error) {
	rates, err := s.PriceHistory(ctx)
	if err != nil {
		return nil, err
	}
	out := map[string]pricing.Schedule{}
	for _, r := range rates {
		out[r.Key()] = append(out[r.Key()], pricing.Rate{Effective: r.EffectiveFrom, Micros: r.Micros})
	}
	return out, s.addTierSchedules(ctx, out)
}

// CurrentPrices returns the rate in force at t for every key, plus whether
// it is still a seeded default.
func (s *Store) CurrentPrices(ctx context.Context, t time.Time) (map[string]PriceRate, error) {
	rates, err := s.PriceHistory(ctx)
	if err != nil {
		return nil, err
	}
	out := map[string]PriceRate{}
	for _, r := range rates { // newest first: the first in force wins
		if _, seen := out[r.Key()]; !seen && !r.EffectiveFrom.After(t) {
			out[r.Key()] = r
		}
	}
	return out, nil
}

// defaultGPURate is an internal hourly rate to start from, by GPU family.
// These are placeholders for admins to review (marked is_default).
func defaultGPURate(model string) int64 {
	m := strings.ToUpper(model)
	switch {
	case strings.Contains(m, "B200"):
		return 4_500_000
	case strings.Contains(m, "H200"):
		return 3_500_000
	case strings.Contains(m, "H100"):
		return 3_000_000
	case strings.Contains(m, "A100"):
		return 2_000_000
	case strings.Contains(m, "L40"):
		return 1_200_000
	default:
		return 1_000_000
	}
}

// SeedDefaultPrices adds a default rate (effective from the beginning of
// time, marked is_default) for each resource and detected GPU model that has
// no rate yet, so no usage is ever unpriced.
func (s *Store) SeedDefaultPrices(ctx context.Context, gpuModels []string) error {
	current, err := s.CurrentPrices(ctx, time.Now().Add(24*time.Hour*365*100))
	if err != nil {
		return err
	}
	epoch := time.Unix(0, 0).UTC()
	want := []PriceRate{
		{Resource: pricing.CPU, Micros: 20_000},      // 0.02 per core-hour
		{Resource: pricing.Memory, Micros: 5_000},    // 0.005 per GiB-hour
		{Resource: pricing.Storage, Micros: 100_000}, // 0.10 per GiB-month
	}
	for _, m := range gpuModels {
		want = append(want, PriceRate{Resource: pricing.GPU, GPUModel: m, Micros: defaultGPURate(m)})
	}
	for _, r := range want {
		if _, ok := current[r.Key()]; ok {
			continue
		}
		r.EffectiveFrom, r.IsDefault, r.CreatedBy, r.CreatedAt = epoch, true, "seed", s.now()
		if err := s.db.WithContext(ctx).Create(&r).Error; err != nil {
			return err
		}
		current[r.Key()] = r
	}
	return nil
}
