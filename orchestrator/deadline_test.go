package orchestrator

import (
	"errors"
	"strings"
	"testing"
	"time"

	"workbench/models"
)

// The deadlines a page shows come from the same rule the culler applies:
// idle stop = last activity + idle timeout, runtime stop = start + the
// shorter of the flavor's (plus extensions) and the quota's limit.
func TestComputeDeadlines(t *testing.T) {
	start := time.Date(2026, 3, 2, 12, 0, 0, 0, time.UTC)
	now := start.Add(90 * time.Minute) // the injected clock
	last := start.Add(48 * time.Minute)
	wb := &models.Workbench{State: models.StateRunning, IdleTimeoutS: 3600, StartedAt: &start}

	cases := []struct {
		name       string
		rule       RuntimeRule
		wantLimit  time.Duration
		wantWhose  string
		wantExtend bool
	}{
		{"no limit", RuntimeRule{}, 0, "", false},
		{"flavor limit, no quota", RuntimeRule{Flavor: 4 * time.Hour}, 4 * time.Hour, "the flavor's", true},
		{"flavor limit extended", RuntimeRule{Flavor: 4 * time.Hour, Extension: 2 * time.Hour}, 6 * time.Hour, "the flavor's", true},
		{"quota shorter than flavor", RuntimeRule{Flavor: 8 * time.Hour, Quota: 5 * time.Hour}, 5 * time.Hour, "your quota's", false},
		{"quota only: hard", RuntimeRule{Quota: 5 * time.Hour}, 5 * time.Hour, "your quota's", false},
		{"extended up to the quota", RuntimeRule{Flavor: 4 * time.Hour, Quota: 5 * time.Hour, Extension: time.Hour}, 5 * time.Hour, "the flavor's", false},
		{"unbounded extensions used up", RuntimeRule{Flavor: time.Hour, Extension: MaxUnboundedExtension}, time.Hour + MaxUnboundedExtension, "the flavor's", false},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			d := ComputeDeadlines(wb, c.rule, last, now)
			if want := start.Add(48*time.Minute + time.Hour); !d.IdleStopAt.Equal(want) {
				t.Errorf("idle stop %s, want %s", d.IdleStopAt, want)
			}
			if d.IdleFor != 42*time.Minute {
				t.Errorf("idle for %s, want 42m", d.IdleFor)
			}
			if d.RuntimeLimit != c.wantLimit || d.RuntimeWhose != c.wantWhose {
				t.Errorf("limit %s (%s), want %s (%s)", d.RuntimeLimit, d.RuntimeWhose, c.wantLimit, c.wantWhose)
			}
			if c.wantLimit > 0 && !d.RuntimeStopAt.Equal(start.Add(c.wantLimit)) {
				t.Errorf("runtime stop %s, want %s", d.RuntimeStopAt, start.Add(c.wantLimit))
			}
			if c.wantLimit == 0 && !d.RuntimeStopAt.IsZero() {
				t.Errorf("runtime stop %s without a limit", d.RuntimeStopAt)
			}
			if d.CanExtend != c.wantExtend {
				t.Errorf("can extend %v, want %v (refusal %q)", d.CanExtend, c.wantExtend, d.ExtendRefusal)
			}
			if c.wantLimit > 0 && !c.wantExtend && d.ExtendRefusal == "" {
				t.Error("a refused extension gives no reason")
			}
		})
	}

	t.Run("no idle timeout", func(t *testing.T) {
		wb := *wb
		wb.IdleTimeoutS = 0
		if d := ComputeDeadlines(&wb, RuntimeRule{}, last, now); !d.IdleStopAt.IsZero() {
			t.Errorf("idle stop %s without an idle timeout", d.IdleStopAt)
		}
	})
}

// "+1 h" adds an hour up to the quota's ceiling, is cut at it, then refused.
func TestRuntimeRuleExtend(t *testing.T) {
	r := RuntimeRule{Flavor: 3 * time.Hour, Quota: 4*time.Hour + 30*time.Minute}
	r, err := r.Extend()
	if err != nil || r.Extension != time.Hour {
		t.Fatalf("first bump: extension %s, err %v; want 1h", r.Extension, err)
	}
	r, err = r.Extend()
	if err != nil || r.Extension != 90*time.Minute {
		t.Fatalf("second bump: extension %s, err %v; want cut to 1h30m (the quota's 4h30m)", r.Extension, err)
	}
	if l, _ := r.Limit(); l != 4*time.Hour+30*time.Minute {
		t.Fatalf("limit %s after bumps, want 4h30m", l)
	}
	_, err = r.Extend()
	var re *RefusedError
	if !errors.As(err, &re) || re.Code != "extend_refused" {
		t.Fatalf("bump past the quota: err %v, want extend_refused", err)
	}

	if !strings.Contains(re.Message, "your quota allows at most 270 min") {
		t.Errorf("refusal at the quota's ceiling: %q", re.Message)
	}

	if _, err := (RuntimeRule{}).Extend(); err == nil {
		t.Fatal("a workbench without a runtime limit was extended")
	}
	// Without a quota the ceiling is the flavor's limit plus 12 h: the
	// refusal says so, and does not blame a quota the user does not have.
	_, err = RuntimeRule{Flavor: time.Minute, Extension: MaxUnboundedExtension}.Extend()
	if !errors.As(err, &re) || strings.Contains(re.Message, "quota") || !strings.Contains(re.Message, "extended by at most 12 h") {
		t.Errorf("refusal at the flavor's ceiling: %v", err)
	}
}

// The culler stops at the deadline ComputeDeadlines shows, not a second
// before: cullReason with an injected clock just before and at it. A
// workbench without an endpoint has no Jupyter to ask, so only the rule
// and the recorded activity count.
func TestCullReasonMatchesDeadlines(t *testing.T) {
	start := time.Date(2026, 3, 2, 12, 0, 0, 0, time.UTC)
	wb := &models.Workbench{ID: "w1", State: models.StateRunning, IdleTimeoutS: 600, StartedAt: &start}
	m := &Manager{activity: newActivityTracker()}
	m.activity.touch("w1", start.Add(5*time.Minute))
	d := ComputeDeadlines(wb, RuntimeRule{}, m.lastActivity(wb), start)
	if want := start.Add(15 * time.Minute); !d.IdleStopAt.Equal(want) {
		t.Fatalf("idle stop %s, want %s", d.IdleStopAt, want)
	}
	if r := m.idleReason(wb, d.IdleStopAt.Add(-time.Second)); r != "" {
		t.Fatalf("culled a second before the deadline: %q", r)
	}
	if r := m.idleReason(wb, d.IdleStopAt); r == "" {
		t.Fatal("not culled at the deadline")
	}
}

// The runtime stop happens at the RuntimeStopAt the page shows.
func TestRuntimeReasonMatchesDeadlines(t *testing.T) {
	start := time.Date(2026, 3, 2, 12, 0, 0, 0, time.UTC)
	wb := &models.Workbench{State: models.StateRunning, StartedAt: &start}
	rule := RuntimeRule{Flavor: 2 * time.Hour, Extension: time.Hour}
	d := ComputeDeadlines(wb, rule, start, start)
	if r := runtimeReason(rule, wb, d.RuntimeStopAt.Add(-time.Second)); r != "" {
		t.Fatalf("stopped a second before the runtime deadline: %q", r)
	}
	if r := runtimeReason(rule, wb, d.RuntimeStopAt); r == "" || d.RuntimeStopAt != start.Add(3*time.Hour) {
		t.Fatalf("at %s (want 15:00): reason %q", d.RuntimeStopAt, r)
	}
}
