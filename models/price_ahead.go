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
// rate it replaces (HasNow false: the resource has no rate yet).
type PriceChange struct {
	Resource, GPUModel string
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
		// Newest first; of versions for one time the first is the one
		// that applies (the last entered).
		ch, ahead := PriceChange{Resource: resource, GPUModel: model}, false
		for _, r := range sched {
			if r.Effective.After(now) {
				if !ahead || r.Effective.Before(ch.From) {
					ch.From, ch.NextMicros, ahead = r.Effective, r.Micros, true
				}
				continue
			}
			ch.NowMicros, ch.HasNow = r.Micros, true
			break
		}
		if ahead {
			out = append(out, ch)
		}
	}
	sort.Slice(out, func(i, j int) bool {
		if !out[i].From.Equal(out[j].From) {
			return out[i].From.Before(out[j].From)
		}
		return pricing.ScheduleKey(out[i].Resource, out[i].GPUModel) < pricing.ScheduleKey(out[j].Resource, out[j].GPUModel)
	})
	return out, nil
}
