package orchestrator

import (
	"sync"
	"time"
)

// The per-minute rollup stamps each GPU-minute with the workbench that held
// the GPU whole then: the utilisation, idle cost and energy of that minute
// are that workbench's (and its owner's). The rollup runs once a minute,
// after the minute is over, so the holder it reads from the pool is the
// one at that moment — a minute before a launch was stamped with the new
// workbench, the last minute of a run with whoever took the GPU next. So
// each sampler collection notes who holds each GPU (holderHistory), and
// the rollup asks for the holder at a minute's last sample.

// holderMark is a change of a GPU's whole holder, at the time of the
// sample the collection that saw it took ("" is free).
type holderMark struct {
	at     time.Time
	holder string
}

// holderHistory keeps, per GPU, the changes of its whole holder (bounded:
// the last holderMarksKept, far more than the sampler's hour of history
// sees).
type holderHistory struct {
	mu    sync.Mutex
	byGPU map[string][]holderMark
}

const holderMarksKept = 256

// note records the holders one collection saw (held: GPU UUID → workbench
// id, whole GPUs only); sampleAt gives the time of a GPU's sample of that
// collection. A GPU never held has no marks and reads as free.
func (h *holderHistory) note(held map[string]string, sampleAt func(uuid string) (time.Time, bool)) {
	h.mu.Lock()
	defer h.mu.Unlock()
	if h.byGPU == nil {
		h.byGPU = map[string][]holderMark{}
	}
	change := func(uuid, holder string) {
		marks := h.byGPU[uuid]
		if n := len(marks); (n == 0 && holder == "") || (n > 0 && marks[n-1].holder == holder) {
			return
		}
		at, ok := sampleAt(uuid)
		if !ok {
			return
		}
		if len(marks) >= holderMarksKept {
			marks = append(marks[:0], marks[1:]...)
		}
		h.byGPU[uuid] = append(marks, holderMark{at: at, holder: holder})
	}
	for uuid, wb := range held {
		change(uuid, wb)
	}
	for uuid := range h.byGPU {
		if _, ok := held[uuid]; !ok {
			change(uuid, "")
		}
	}
}

// at returns a function giving the holder of the GPU uuid at a sample
// time: the last change noted at or before it. Without any mark (a GPU
// never seen held since the portal started) it is fallback, the holder
// now.
func (h *holderHistory) at(uuid, fallback string) func(time.Time) string {
	h.mu.Lock()
	marks := append([]holderMark(nil), h.byGPU[uuid]...)
	h.mu.Unlock()
	if len(marks) == 0 {
		return func(time.Time) string { return fallback }
	}
	return func(t time.Time) string {
		holder := ""
		for _, m := range marks {
			if m.at.After(t) {
				break
			}
			holder = m.holder
		}
		return holder
	}
}
