package runtime

import (
	"testing"
	"time"
)

// The engine logs a `docker stop`'s kill after the signal is delivered and
// its stop after the container is down, so a process that exits at once on
// SIGTERM has a FinishedAt before both events (CI saw the kill 0.3 ms
// late). They still belong to the run they ended; a kill from before the
// run started does not.
func TestStopOfRunCountsAKillLoggedJustAfterTheExit(t *testing.T) {
	started := time.Date(2026, 12, 7, 3, 0, 0, 0, time.UTC)
	finished := started.Add(time.Hour)
	for _, c := range []struct {
		name string
		at   time.Time
		want bool
	}{
		{"during the run", started.Add(time.Minute), true},
		{"at the exit", finished, true},
		{"logged just after the exit", finished.Add(300 * time.Microsecond), true},
		{"logged seconds after the exit on a busy engine", finished.Add(5 * time.Second), true},
		{"before the run started", started.Add(-time.Millisecond), false},
		{"long after the run", finished.Add(time.Hour), false},
	} {
		if got := StopOfRun(c.at, started, finished); got != c.want {
			t.Errorf("%s: StopOfRun = %v, want %v", c.name, got, c.want)
		}
	}
}
