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
		EventExpired, EventFailed, EventSaveCutShort, EventHomeLost, EventRenamed, EventStorageOver}
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

// A subject that is not plain ASCII goes in the header as an encoded word
// (a raw UTF-8 header is not valid mail); an English one as it is, and a
// line break in it never starts a new header.
func TestHeaderText(t *testing.T) {
	if got := headerText("Workbench: overnight must yield its GPUs"); got != "Workbench: overnight must yield its GPUs" {
		t.Errorf("ASCII subject %q", got)
	}
	if got := headerText("Workbench：overnight 必须让出 GPU"); !strings.HasPrefix(got, "=?utf-8?q?") || strings.ContainsAny(got, "\r\n") {
		t.Errorf("Chinese subject %q", got)
	}
	if got := headerText("a\r\nBcc: x@example.org"); strings.ContainsAny(got, "\r\n") {
		t.Errorf("line break kept: %q", got)
	}
}
