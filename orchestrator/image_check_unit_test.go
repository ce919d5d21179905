package orchestrator

import "testing"

func TestWritableHome(t *testing.T) {
	for _, c := range []struct {
		uid, gid, owner, group int
		mode                   int64
		want                   bool
	}{
		{1000, 1000, 1000, 1000, 0o755, true},
		{1000, 1000, 1000, 100, 0o555, false}, // the owner, but read-only
		{65534, 65534, 1000, 100, 0o755, false},
		{65534, 100, 1000, 100, 0o775, true}, // by its group
		{65534, 65534, 0, 0, 0o1777, true},   // world-writable
		{1000, 1000, 1000, 1000, 0o655, false},
	} {
		if got := writable(c.uid, c.gid, c.owner, c.group, c.mode); got != c.want {
			t.Errorf("writable(%d:%d, owner %d:%d, %#o) = %v, want %v", c.uid, c.gid, c.owner, c.group, c.mode, got, c.want)
		}
	}
	if got := fmtMode(0o40555); got != "r-xr-xr-x" {
		t.Errorf("fmtMode = %q", got)
	}
}
