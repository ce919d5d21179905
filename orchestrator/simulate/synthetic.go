package simulate

import (
	"fmt"
	"math/rand/v2"
	"sort"
	"time"
)

// Synthetic is a lab day on 8 GPUs, drawn from seed (the same seed gives
// the same trace): 30 people; many short interactive notebook sessions
// during working hours that need a quarter of a GPU; some interactive
// sessions on a whole GPU; long batch jobs (1–2 GPUs, not preemptible); and
// preemptible training runs (1–2 GPUs, checkpointing every 20–40 min)
// submitted through the day and the evening. The shipped
// testdata/labday.csv is Synthetic(1).
func Synthetic(seed uint64) Trace {
	rng := rand.New(rand.NewPCG(seed, seed^0x5eed))
	var tr Trace
	user := func() string { return fmt.Sprintf("u%02d", 1+rng.IntN(30)) }
	between := func(lo, hi time.Duration) time.Duration {
		return (lo + time.Duration(rng.Int64N(int64(hi-lo)))).Truncate(time.Minute)
	}
	h := time.Hour
	// Interactive, a fraction of a GPU: 90 sessions, 09:00–18:00, 20–120 min.
	for range 90 {
		tr = append(tr, Job{Arrival: between(9*h, 18*h), User: user(), GPUs: 0.25,
			Duration: between(20*time.Minute, 2*h), Priority: "interactive"})
	}
	// Interactive on a whole GPU: 10 sessions, 30 min – 3 h.
	for range 10 {
		tr = append(tr, Job{Arrival: between(9*h, 17*h), User: user(), GPUs: 1,
			Duration: between(30*time.Minute, 3*h), Priority: "interactive"})
	}
	// Batch: 6 jobs, 1–2 GPUs, 2–6 h, submitted 08:00–20:00.
	for range 6 {
		tr = append(tr, Job{Arrival: between(8*h, 20*h), User: user(), GPUs: float64(1 + rng.IntN(2)),
			Duration: between(2*h, 6*h), Priority: "batch"})
	}
	// Preemptible training: 8 runs, 1–2 GPUs, 3–8 h, checkpoint 20–40 min,
	// submitted 07:00–22:00.
	for range 8 {
		tr = append(tr, Job{Arrival: between(7*h, 22*h), User: user(), GPUs: float64(1 + rng.IntN(2)),
			Duration: between(3*h, 8*h), Priority: "preemptible", Preemptible: true,
			Checkpoint: between(20*time.Minute, 40*time.Minute)})
	}
	sort.SliceStable(tr, func(i, j int) bool { return tr[i].Arrival < tr[j].Arrival })
	for i := range tr {
		tr[i].ID = fmt.Sprintf("j%04d", i+1)
	}
	return tr
}
