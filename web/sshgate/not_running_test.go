package sshgate

import (
	"testing"

	"workbench/models"
)

// TestNotRunningMessageByState: a shell refused for a workbench that is not
// running says what to do by its state: a queued one starts by itself (it
// said "start it on the portal first", which a queued one cannot be).
func TestNotRunningMessageByState(t *testing.T) {
	for state, want := range map[string]string{
		models.StateQueued:   `workbench "exp" is queued: it starts by itself when its turn comes; connect again once it runs`,
		models.StatePulling:  `workbench "exp" is pulling: connect again once it runs`,
		models.StateStopping: `workbench "exp" is stopping; start it again on the portal once it has stopped`,
		models.StateStopped:  `workbench "exp" is stopped; start it on the portal first`,
	} {
		if got := notRunningMessage(&models.Workbench{Name: "exp", State: state}); got != want {
			t.Errorf("%s: %q\nwant %q", state, got, want)
		}
	}
}
