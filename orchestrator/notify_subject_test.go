package orchestrator

import (
	"strings"
	"testing"
)

// Every event told to an owner has a subject of its own naming what
// happened; none falls through to the GPU watch's ("Workbench: a  GPU is
// free" for a lost home volume).
func TestEveryNoticeEventHasItsOwnSubject(t *testing.T) {
	events := []string{EventStarted, EventPreempt, EventPreempted, EventSpared, EventStopped, EventStoppingSoon,
		EventExpired, EventFailed, EventSaveCutShort, EventHomeLost, EventRenamed}
	seen := map[string]string{}
	for _, e := range events {
		s := Notice{Event: e, Workbench: "overnight"}.subject()
		if strings.Contains(s, "GPU is free") || !strings.HasPrefix(s, "Workbench: ") {
			t.Errorf("%s: subject %q", e, s)
		}
		if other, dup := seen[s]; dup {
			t.Errorf("%s and %s share the subject %q", e, other, s)
		}
		seen[s] = e
	}
	if s := (Notice{Event: "gpu_free", GPUModel: "NVIDIA H100"}).subject(); s != "Workbench: a NVIDIA H100 GPU is free" {
		t.Errorf("GPU watch subject %q", s)
	}
	if s := (Notice{Event: "gpu_free", Flavor: "2x H100"}).subject(); s != "Workbench: flavor 2x H100 can start" {
		t.Errorf("flavor watch subject %q", s)
	}
}
