package handlers

import (
	"testing"

	"workbench/models"
)

// The notebook tab says in one sentence why the workbench is not running,
// from the reason recorded by whoever stopped it.
func TestWhyNotRunning(t *testing.T) {
	for _, tc := range []struct {
		state, reason, want string
	}{
		{models.StateStopped, "", "It was stopped by you (from the portal or the API)."},
		{models.StateStopped, "stopped after 1h0m0s without activity (idle timeout)", "It was stopped after 1h0m0s without activity (idle timeout)."},
		{models.StateStopped, "stopped by an administrator (root)", "It was stopped by an administrator (root)."},
		{models.StateStopped, "stopped: monthly budget of 100.00 USD reached (your files are kept)", "It was stopped: monthly budget of 100.00 USD reached (your files are kept)."},
		{models.StateStopped, "the container exited (code 137)", "It was stopped because the container exited (code 137)."},
		{models.StateFailed, "Jupyter exited while starting (exit code 1)", "It failed: Jupyter exited while starting (exit code 1)"},
		{models.StateStopping, "", "It is stopping."},
		{models.StatePulling, "", "It is starting (pulling). This page reloads by itself until JupyterLab answers."},
	} {
		got := whyNotRunning(&models.Workbench{State: tc.state, Reason: tc.reason})
		if got != tc.want {
			t.Errorf("%s %q: got %q, want %q", tc.state, tc.reason, got, tc.want)
		}
	}
}
