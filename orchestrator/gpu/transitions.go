package gpu

// transitions remembers the last value seen per key so that callers log a
// condition when it changes, not on every poll. Guarded by the owner's mutex.
type transitions struct {
	last map[string]string
}

func (t *transitions) get(key string) (string, bool) {
	v, ok := t.last[key]
	return v, ok
}

// set records val and reports whether it differs from the previous value.
// An empty val for an unseen key is not a change (nothing to report).
func (t *transitions) set(key, val string) bool {
	if t.last == nil {
		t.last = map[string]string{}
	}
	prev, ok := t.last[key]
	if !ok && val == "" {
		return false
	}
	t.last[key] = val
	return !ok || prev != val
}
