package models

import (
	"context"
	"fmt"
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
	case pricing.GPU, pricing.Slice:
		if strings.TrimSpace(r.GPUModel) == "" {
			return invalid("gpu_model", "a GPU or slice rate needs the GPU model")
		}
	case pricing.MIG:
		r.GPUModel = strings.ToLower(strings.TrimSpace(r.GPUModel))
		if !migProfileRe.MatchString(r.GPUModel) {
			return invalid("gpu_model", "a MIG rate needs the MIG profile (such as 1g.10gb) in gpu_model")
		}
	case pricing.CPU, pricing.Memory, pricing.Storage:
		// Refused, not dropped: "cpu on H100 nodes" would otherwise change
		// the CPU rate of every workbench.
		if strings.TrimSpace(r.GPUModel) != "" {
			return invalid("gpu_model", "a %s rate is the same for every workbench, whatever its GPUs: leave the GPU model empty", r.Resource)
		}
		r.GPUModel = ""
	default:
		return invalid("resource", "must be gpu, mig, slice, cpu, memory or storage")
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
	if r.EffectiveFrom.Before(now) && r.EffectiveFrom.Nanosecond() == 0 && !r.EffectiveFrom.Before(now.Truncate(time.Second)) {
		// This very second, written to the second ("…:05Z" at 01:52:05.3):
		// it means now, and was refused as "in the past (it is now
		// 01:52:05)". A time given finer than that is taken as written.
		r.EffectiveFrom = now
	}
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
// Every page that shows a cost reads it, and rates change a few times a
// year: it is cached until price_rates is written. Callers must not modify
// the map or its schedules.
func (s *Store) Schedules(ctx context.Context) (map[string]pricing.Schedule, error) {
	return s.schedules.get(s.versions, []string{"price_rates", "price_tiers"}, func() (map[string]pricing.Schedule, error) {
		rates, err := s.PriceHistory(ctx)
		if err != nil {
			return nil, err
		}
		out := map[string]pricing.Schedule{}
		for _, r := range rates {
			out[r.Key()] = append(out[r.Key()], pricing.Rate{Effective: r.EffectiveFrom, Micros: r.Micros})
		}
		return out, s.addTierSchedules(ctx, out)
	})
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

// defaultSliceRate is a slice-hour's starting rate: a quarter of the GPU's
// (a placeholder for admins to review, like every seeded rate).
func defaultSliceRate(model string) int64 { return defaultGPURate(model) / 4 }

// defaultMIGRate is a MIG profile-hour's starting rate: the GPU's rate
// times the profile's share of compute slices (g of 7), so 7 × 1g cost one
// whole GPU. Unknown shapes start at the whole GPU's rate.
func defaultMIGRate(profile, gpuModel string) int64 {
	g := 7
	if _, rest, ok := strings.Cut(profile, "c."); ok {
		profile = rest
	}
	if n, _, ok := strings.Cut(profile, "g."); ok && len(n) == 1 && n[0] >= '1' && n[0] <= '7' {
		g = int(n[0] - '0')
	}
	return defaultGPURate(gpuModel) * int64(g) / 7
}

// SeedMIGPrices adds a default rate (marked is_default) for each MIG profile
// that has none; profiles maps a profile to the GPU model it lies on.
func (s *Store) SeedMIGPrices(ctx context.Context, profiles map[string]string) error {
	for profile, model := range profiles {
		if err := s.SeedUnitPrice(ctx, pricing.MIG, profile, model); err != nil {
			return err
		}
	}
	return nil
}

// SeedUnitPrice adds a default rate (marked is_default, from the beginning
// of time) for a MIG profile or a GPU model's slices when it has none, so
// a unit kind is never unpriced the moment it appears: a MIG profile is
// discovered or named by a flavor, a GPU is shared or a slice flavor made.
func (s *Store) SeedUnitPrice(ctx context.Context, resource, key, gpuModel string) error {
	r := PriceRate{Resource: resource, GPUModel: key}
	switch resource {
	case pricing.MIG:
		r.Micros = defaultMIGRate(key, gpuModel)
	case pricing.Slice:
		r.Micros = defaultSliceRate(gpuModel)
	default:
		return fmt.Errorf("no default rate for unit kind %q", resource)
	}
	var n int64
	if err := s.db.WithContext(ctx).Model(&PriceRate{}).Where("resource = ? AND gpu_model = ?", resource, key).Count(&n).Error; err != nil || n > 0 {
		return err
	}
	r.EffectiveFrom, r.IsDefault, r.CreatedBy, r.CreatedAt = time.Unix(0, 0).UTC(), true, "seed", s.now()
	return s.db.WithContext(ctx).Create(&r).Error
}
