package gpu

// ring is a fixed-capacity buffer of samples for one GPU; once full, each
// new sample overwrites the oldest, so memory stays bounded however long
// the portal runs.
type ring struct {
	buf   []Sample
	start int // index of the oldest sample
	n     int // number of samples held
}

func newRing(capacity int) *ring { return &ring{buf: make([]Sample, capacity)} }

func (r *ring) push(s Sample) {
	if r.n < len(r.buf) {
		r.buf[(r.start+r.n)%len(r.buf)] = s
		r.n++
		return
	}
	r.buf[r.start] = s
	r.start = (r.start + 1) % len(r.buf)
}

// slice returns a copy, oldest first, so callers never share the buffer.
func (r *ring) slice() []Sample {
	out := make([]Sample, r.n)
	for i := range r.n {
		out[i] = r.buf[(r.start+i)%len(r.buf)]
	}
	return out
}

func (r *ring) latest() (Sample, bool) {
	if r.n == 0 {
		return Sample{}, false
	}
	return r.buf[(r.start+r.n-1)%len(r.buf)], true
}

// previous is the sample before the latest.
func (r *ring) previous() (Sample, bool) {
	if r.n < 2 {
		return Sample{}, false
	}
	return r.buf[(r.start+r.n-2)%len(r.buf)], true
}
