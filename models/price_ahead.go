package models

import (
	"context"
	"sort"
	"strings"
	"time"

	"workbench/models/pricing"
)

// PriceChange is a rate scheduled to take effect after now: the resource
// (and GPU model or profile for GPU units), when, the rate then and the
// rate it replaces (HasNow false: the resource has no rate yet). For a
// tier's discount (Tier set, Resource empty), NextMicros and NowMicros are
// percentages off the GPU rates.
type PriceChange struct {
	Resource, GPUModel string
	Tier               string
	From               time.Time
	NextMicros         int64
	NowMicros          int64
	HasNow             bool
}

// PriceChangesAhead lists, per priced resource, the next rate scheduled
// after now, soonest first: what members are told before it bills them.
// It reads the cached schedules (every page that shows a price does).
func (s *Store) PriceChangesAhead(ctx context.Context, now time.Time) ([]PriceChange, error) {
	scheds, err := s.Schedules(ctx)
	if err != nil {
		return nil, err
	}
	var out []PriceChange
	for key, sched := range scheds {
		resource, model, _ := strings.Cut(key, "|")
		switch resource {
		case pricing.GPU, pricing.MIG, pricing.Slice, pricing.CPU, pricing.Memory, pricing.Storage:
		default:
			continue // a tier's derived schedule ("gpu@preemptible")
		}
		if ch, ok := nextChange(sched, now); ok {
			ch.Resource, ch.GPUModel = resource, model
			out = append(out, ch)
		}
	}
	// A tier's discount changes what its runs cost as a rate does: a
	// preemptible run lasting past a new discount was billed at it
	// unannounced. The derived schedules above change with it, per GPU
	// model; the discount is told once.
	tiers, err := s.PriceTierHistory(ctx)
	if err != nil {
		return nil, err
	}
	disc := map[string]pricing.Schedule{}
	for _, t := range tiers {
		disc[t.Tier] = append(disc[t.Tier], pricing.Rate{Effective: t.EffectiveFrom, Micros: t.DiscountPct})
	}
	for tier, sched := range disc {
		if ch, ok := nextChange(sched, now); ok {
			ch.Tier = tier
			out = append(out, ch)
		}
	}
	sort.Slice(out, func(i, j int) bool {
		if !out[i].From.Equal(out[j].From) {
			return out[i].From.Before(out[j].From)
		}
		return out[i].Tier+pricing.ScheduleKey(out[i].Resource, out[i].GPUModel) < out[j].Tier+pricing.ScheduleKey(out[j].Resource, out[j].GPUModel)
	})
	return out, nil
}

// nextChange is the first time after now at which sched's rate differs from
// the one before it: a version entered for a future time that repeats the
// rate in force (an admin's way to call off a change) changes nothing and
// is not announced.
func nextChange(sched pricing.Schedule, now time.Time) (PriceChange, bool) {
	var times []time.Time
	for _, r := range sched {
		if r.Effective.After(now) {
			times = append(times, r.Effective)
		}
	}
	sort.Slice(times, func(i, j int) bool { return times[i].Before(times[j]) })
	var ch PriceChange
	cur, has := sched.At(now)
	ch.NowMicros, ch.HasNow = cur.Micros, has
	prev, hasPrev := cur.Micros, has
	for _, t := range times {
		r, _ := sched.At(t) // the version that applies from t (the last entered)
		if !hasPrev || r.Micros != prev {
			ch.From, ch.NextMicros = t, r.Micros
			return ch, true
		}
		prev, hasPrev = r.Micros, true
	}
	return ch, false
}
