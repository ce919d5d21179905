package orchestrator

import (
	"testing"
	"time"

	"workbench/models"
	"workbench/models/pricing"
	"workbench/orchestrator/gpu"
)

// The dashboard's figures recomputed by hand from a fixture of samples
// (rolled up as the manager does) and allocations: two days, two GPU
// models, two users (one in two groups), a rate change, an unread minute.
func TestUtilisationFromSamplesAndAllocations(t *testing.T) {
	day0 := time.Date(2026, 3, 2, 0, 0, 0, 0, time.UTC) // a Monday
	const h100, a100 = "NVIDIA H100 80GB HBM3", "NVIDIA A100-SXM4-80GB"
	// samples: 4 a minute (15 s) at util, for n minutes from start.
	samples := func(start time.Time, n int, util uint32, unread bool) []gpu.Sample {
		var out []gpu.Sample
		for i := 0; i < n*4; i++ {
			s := gpu.Sample{At: start.Add(time.Duration(i) * 15 * time.Second), UtilPercent: util}
			if unread {
				s.Unread = gpu.FieldUtil
			}
			out = append(out, s)
		}
		return out
	}
	var rows []models.GPUMinute
	roll := func(uuid, model, holder string, hist []gpu.Sample) {
		rows = append(rows, rollupMinutes(uuid, model, func(time.Time) string { return holder }, hist, day0, day0.AddDate(0, 0, 7))...)
	}
	// Day 0, 10:00: GPU-A (H100) held by ada's "train" 60 min at 75%;
	// GPU-B (H100) nobody holds for 60 min; GPU-C (A100) held by bob 30 min
	// at 0% then 30 min unreadable.
	t10 := day0.Add(10 * time.Hour)
	roll("GPU-A", h100, "wb-train", samples(t10, 60, 75, false))
	roll("GPU-B", h100, "", samples(t10, 60, 0, false))
	roll("GPU-C", a100, "wb-bob", samples(t10, 30, 0, false))
	roll("GPU-C", a100, "wb-bob", samples(t10.Add(30*time.Minute), 30, 0, true))
	// Day 1, 09:00, after the H100 rate doubled at 00:00: GPU-A held by
	// ada's "train" 120 min at 10%, minute means alternate 0% and 20%.
	t9 := day0.Add(33 * time.Hour)
	for i := 0; i < 120; i++ {
		roll("GPU-A", "", "wb-train", samples(t9.Add(time.Duration(i)*time.Minute), 1, uint32(20*(i%2)), false))
	}
	holders := map[string]UtilHolder{
		"wb-train": {Workbench: "train", User: "ada", Groups: []string{"nlp", "vision"}},
		"wb-bob":   {Workbench: "sim", User: "bob"},
	}
	modelOf := map[string]string{"GPU-A": h100} // day 1's rows carry no model
	scheds := map[string]pricing.Schedule{
		pricing.ScheduleKey(pricing.GPU, h100): {{Effective: day0.AddDate(0, 0, -30), Micros: 2_000_000}, {Effective: day0.AddDate(0, 0, 1), Micros: 4_000_000}},
		pricing.ScheduleKey(pricing.GPU, a100): {{Effective: day0.AddDate(0, 0, -30), Micros: 1_500_000}},
	}
	rep := ComputeUtilisation(rows, day0, day0.AddDate(0, 0, 2), "day", holders, modelOf, scheds)

	const hour = int64(3_600_000)
	tot := rep.Total
	if tot.AvailableMs != 5*hour || tot.AllocatedMs != 4*hour || tot.UnreadHeldMs != hour/2 {
		t.Fatalf("total available %d allocated %d unread %d (ms)", tot.AvailableMs, tot.AllocatedMs, tot.UnreadHeldMs)
	}
	// Busy: 1 h × 75% + 2 h × 10% = 0.95 h.
	if tot.BusyMs != hour*95/100 {
		t.Errorf("busy %d ms, want %d", tot.BusyMs, hour*95/100)
	}
	// Unheld: GPU-B 1 h at 2.00. Held idle: GPU-A day 0 0.25 h at 2.00
	// (0.50) + GPU-C 0.5 h at 1.50 (0.75; the unread half is not idle) +
	// GPU-A day 1 1.8 h at 4.00 (7.20).
	if c := tot.UnheldCostMicros(); c != 2_000_000 {
		t.Errorf("unheld cost %d, want 2 000 000", c)
	}
	if c := tot.HeldIdleCostMicros(); c != 500_000+750_000+7_200_000 {
		t.Errorf("held idle cost %d, want 8 450 000", c)
	}
	if p := tot.UsedPercent(); p != 27 { // 0.95 of 3.5 readable held hours
		t.Errorf("used %d%%, want 27", p)
	}

	if len(rep.Buckets) != 2 || rep.Buckets[0].AvailableMs != 3*hour || rep.Buckets[1].AvailableMs != 2*hour ||
		rep.Buckets[1].HeldIdleCostMicros() != 7_200_000 {
		t.Errorf("day buckets %+v", rep.Buckets)
	}
	if rep.ByModel[0].Key != h100 || rep.ByModel[0].AvailableMs != 4*hour || rep.ByModel[1].Key != a100 {
		t.Errorf("by model %+v", rep.ByModel)
	}
	if rep.ByUser[0].Key != "ada" || rep.ByUser[0].AllocatedMs != 3*hour || rep.ByUser[1].Key != "bob" || rep.ByUser[1].BusyMs != 0 {
		t.Errorf("by user %+v", rep.ByUser)
	}
	groups := map[string]int64{}
	for _, g := range rep.ByGroup {
		groups[g.Key] = g.AllocatedMs
	}
	if groups["nlp"] != 3*hour || groups["vision"] != 3*hour || groups[""] != hour {
		t.Errorf("by group %v (ada counts in both of hers; bob in none)", groups)
	}
	if len(rep.TopIdle) != 2 || rep.TopIdle[0].Key != "ada/train" || rep.TopIdle[0].IdleHeldMs() != hour/4+hour*18/10 {
		t.Errorf("top idle %+v", rep.TopIdle)
	}

	// Weeks start on Monday; a month bucket holds both days.
	if w := ComputeUtilisation(rows, day0, day0.AddDate(0, 0, 2), "month", holders, modelOf, scheds); len(w.Buckets) != 1 || w.Buckets[0].AvailableMs != 5*hour {
		t.Errorf("month buckets %+v", w.Buckets)
	}
	if s := BucketStart(day0.Add(6*24*time.Hour+time.Hour), "week"); !s.Equal(day0) {
		t.Errorf("week of Sunday starts %v", s)
	}
}

// BenchmarkComputeUtilisation30Days8GPUs: the dashboard's arithmetic over
// a month of rollups of 8 GPUs (345 600 rows), daily buckets.
func BenchmarkComputeUtilisation30Days8GPUs(b *testing.B) {
	from := time.Date(2026, 3, 1, 0, 0, 0, 0, time.UTC)
	const model = "NVIDIA H100 80GB HBM3"
	rows := make([]models.GPUMinute, 0, 8*30*1440)
	for g := 0; g < 8; g++ {
		for m := 0; m < 30*1440; m++ {
			r := models.GPUMinute{GPUUUID: "GPU-" + string(rune('a'+g)), Minute: from.Unix() + int64(m)*60, Samples: 4,
				UtilSamples: 4, UtilSum: int64((m * 7 % 101) * 4), GPUModel: model}
			if m%3 != 0 {
				r.WorkbenchID = "wb-" + string(rune('a'+(m/600)%20))
			}
			rows = append(rows, r)
		}
	}
	holders := map[string]UtilHolder{}
	for i := 0; i < 20; i++ {
		holders["wb-"+string(rune('a'+i))] = UtilHolder{Workbench: "w", User: "u" + string(rune('a'+i%5)), Groups: []string{"g1", "g2"}}
	}
	scheds := map[string]pricing.Schedule{pricing.ScheduleKey(pricing.GPU, model): {{Effective: from.AddDate(-1, 0, 0), Micros: 2_500_000}}}
	b.ReportAllocs()
	for b.Loop() {
		ComputeUtilisation(rows, from, from.AddDate(0, 0, 30), "day", holders, nil, scheds)
	}
}
