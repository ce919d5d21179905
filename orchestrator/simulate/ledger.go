package simulate

import (
	"context"
	"fmt"
	"sort"
	"strconv"
	"strings"
	"time"

	"workbench/models"
)

// LedgerTrace builds a demand trace from the real usage of [from, to): one
// job per metered GPU run (the usage intervals the ledger prices) of one
// GPU model (model, or the one with the most GPU-hours when empty),
// arriving when it was asked for (its launch, its entry in the queue, a
// resume), lasting what it ran (to `to` for a run still open), in its
// priority class when it is a seeded one (interactive, batch, preemptible;
// an admin's own classes replay as interactive), preemptible when it ran
// at the preemptible tier. A MIG instance of g compute slices asks for g/7 of
// a GPU, a slice 1/slices (several instances: the whole GPUs they add up
// to). Checkpoints are unknown (0: a preempted job loses all its work).
// Times count from `from`. It returns the model replayed.
func LedgerTrace(ctx context.Context, store *models.Store, from, to time.Time, model string, slices int) (Trace, string, error) {
	runs, err := store.ReplayRuns(ctx, from, to)
	if err != nil {
		return nil, "", err
	}
	if model == "" {
		hours := map[string]float64{}
		for _, r := range runs {
			hours[r.GPUModel] += float64(r.GPUCount) * runEnd(r, to).Sub(r.StartedAt).Hours()
		}
		for m, h := range hours {
			if model == "" || h > hours[model] || h == hours[model] && m < model {
				model = m
			}
		}
	}
	var tr Trace
	for _, r := range runs {
		if !strings.EqualFold(r.GPUModel, model) && !strings.EqualFold(strings.TrimPrefix(r.GPUModel, "NVIDIA "), model) {
			continue
		}
		model = r.GPUModel
		dur := runEnd(r, to).Sub(r.StartedAt).Truncate(time.Second)
		if dur <= 0 {
			continue
		}
		asked := r.StartedAt
		if r.AskedAt != nil && r.AskedAt.Before(asked) && !r.AskedAt.Before(from) {
			asked = *r.AskedAt
		}
		j := Job{ID: fmt.Sprintf("j%04d", len(tr)+1), Arrival: asked.Sub(from).Truncate(time.Second), User: r.Username,
			GPUs: float64(r.GPUCount), Duration: dur, Priority: nearestClass(r.Priority), Preemptible: r.Tier == "preemptible"}
		switch r.UnitKind {
		case models.UnitMIG:
			g := migProfileSlices(r.UnitProfile)
			if f := float64(r.GPUCount*g) / 7; f < 1 {
				j.GPUs = f
			} else {
				j.GPUs = float64((r.GPUCount*g + 6) / 7)
			}
		case models.UnitSlice:
			if slices > 1 {
				j.GPUs = 1 / float64(slices)
			}
		}
		if j.Preemptible {
			j.Priority = "preemptible"
		}
		tr = append(tr, j)
	}
	if len(tr) == 0 {
		return nil, model, fmt.Errorf("no GPU runs of %s from %s to %s", orAny(model), from.Format("2006-01-02"), to.Format("2006-01-02"))
	}
	sort.SliceStable(tr, func(a, b int) bool { return tr[a].Arrival < tr[b].Arrival })
	for i := range tr {
		tr[i].ID = fmt.Sprintf("j%04d", i+1)
	}
	return tr, model, check(tr)
}

func runEnd(r models.ReplayRun, to time.Time) time.Time {
	if r.EndedAt != nil && r.EndedAt.Before(to) {
		return *r.EndedAt
	}
	return to
}

func orAny(m string) string {
	if m == "" {
		return "any model"
	}
	return m
}

// nearestClass maps a priority class to a seeded one the trace knows.
func nearestClass(name string) string {
	if _, ok := Classes[name]; ok {
		return name
	}
	return "interactive"
}

// ParseBooking reads --reserve USER,KIND,UNITS,START_S,END_S (KIND gpu,
// slice or mig:PROFILE).
func ParseBooking(v string) (Booking, error) {
	f := strings.Split(v, ",")
	if len(f) != 5 {
		return Booking{}, fmt.Errorf("--reserve %q: want USER,KIND,UNITS,START_S,END_S", v)
	}
	b := Booking{User: strings.TrimSpace(f[0]), Kind: strings.TrimSpace(f[1])}
	if kind, profile, ok := strings.Cut(b.Kind, ":"); ok {
		b.Kind, b.Profile = kind, profile
	}
	units, err1 := strconv.Atoi(strings.TrimSpace(f[2]))
	start, err2 := strconv.ParseFloat(strings.TrimSpace(f[3]), 64)
	end, err3 := strconv.ParseFloat(strings.TrimSpace(f[4]), 64)
	if err1 != nil || err2 != nil || err3 != nil || units < 1 || start < 0 || end <= start || b.User == "" {
		return Booking{}, fmt.Errorf("--reserve %q: units a whole number above 0, times in seconds, end after start", v)
	}
	b.Units, b.Start, b.End = units, time.Duration(start*float64(time.Second)), time.Duration(end*float64(time.Second))
	return b, nil
}
