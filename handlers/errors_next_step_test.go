package handlers

import (
	"errors"
	"fmt"
	"net/http"
	"regexp"
	"testing"

	"workbench/models"
	"workbench/orchestrator"
)

// nextStep finds what a message tells its reader to do: an instruction
// after the account of what went wrong.
var nextStep = regexp.MustCompile(`\b(try|ask|tell|start|stop|wait|open|go back|choose|delete|log in|book|edit|use|disable|retry|force|save|confirm|check)\b`)

// Every error a person can meet says what to do next, not only what went
// wrong (issue 8 §5): the generic refusals, the state conflicts of the
// lifecycle, the engine being down and the server failing.
func TestErrorsSayWhatToDoNext(t *testing.T) {
	for _, tc := range []struct {
		err    error
		status int
		want   string
	}{
		{errForbidden, http.StatusForbidden, "you are not allowed to do this; ask an admin if you need it"},
		{errNotFound, http.StatusNotFound, "not found: it may have been deleted, or the link is out of date; go back to the list and pick it again"},
		{fmt.Errorf("load: %w", models.ErrNotFound), http.StatusNotFound, "not found: it may have been deleted, or the link is out of date; go back to the list and pick it again"},
		{errUnauthorized, http.StatusUnauthorized, "log in or send an API token"},
		{fmt.Errorf("%w: a flavor named x", models.ErrConflict), http.StatusConflict, "already exists: a flavor named x; edit the existing one, or use another name"},
		{fmt.Errorf("%w: dial unix", orchestrator.ErrEngineUnavailable), http.StatusServiceUnavailable,
			"the Docker engine is not reachable, so workbenches cannot be launched or changed right now; try again in a minute, and tell an admin if it lasts"},
		{errors.New("disk I/O error"), http.StatusInternalServerError,
			"something went wrong on the server (it has been logged); try again, and tell an admin if it keeps happening"},
		{fmt.Errorf("could not save the image: %w", fmt.Errorf("saving a workbench as an image is not available on Kubernetes: use an image built from a Dockerfile: %w", errors.ErrUnsupported)),
			http.StatusNotImplemented, "could not save the image: saving a workbench as an image is not available on Kubernetes: use an image built from a Dockerfile: unsupported operation"},
		{&orchestrator.StopError{Message: "the engine did not stop the container"}, http.StatusBadGateway,
			"the engine did not stop the container; retry, or force the stop (force=true)"},
		{&orchestrator.StopError{Message: "could not stop the container: unreachable", Err: fmt.Errorf("inspect: %w", orchestrator.ErrEngineUnavailable)}, http.StatusServiceUnavailable,
			"the Docker engine is not reachable, so the container could not be stopped yet; the stop is recorded and finishes by itself when the engine is back (the workbench shows stopping until then)"},
	} {
		got := classify(tc.err)
		if got.Status != tc.status || got.Message != tc.want {
			t.Errorf("%v: %d %q, want %d %q", tc.err, got.Status, got.Message, tc.status, tc.want)
		}
		if !nextStep.MatchString(got.Message) {
			t.Errorf("%v: %q names no next step", tc.err, got.Message)
		}
	}

	// Starting a workbench that is not stopped says what to do instead,
	// by its state.
	for state, want := range map[string]string{
		models.StateRunning:  "the workbench is running; open it (only a stopped, failed or preempted workbench can be started)",
		models.StateQueued:   "the workbench is queued; it starts by itself when GPUs free up (only a stopped, failed or preempted workbench can be started)",
		models.StateStopping: "the workbench is stopping; wait until it has stopped, then start it (only a stopped, failed or preempted workbench can be started)",
		models.StatePulling:  "the workbench is pulling; it is already on its way; wait for it on its page (only a stopped, failed or preempted workbench can be started)",
	} {
		if got := classify(orchestrator.StartRefusal(state)); got.Status != http.StatusConflict || got.Code != "invalid_state" || got.Message != want {
			t.Errorf("start when %s: %d %s %q, want 409 invalid_state %q", state, got.Status, got.Code, got.Message, want)
		}
	}
}
