package orchestrator

import (
	"context"
	"errors"
	"io"
	"maps"
	"net/http"
	"slices"
	"strings"
	"testing"

	"workbench/models"
)

// A launch never overwrites a state someone else set while it ran: when
// the workbench was moved to stopping while the pipeline waited for
// Jupyter, Jupyter's answer no longer makes it running (the transition's
// compare-and-set refuses) and the launch ends without failing it.
func TestMemLaunchDoesNotOverwriteAStateChangedMeanwhile(t *testing.T) {
	t.Parallel()
	r := newMemRig(t)
	r.m.UseFirewall(&recordingFirewall{})
	answer := make(chan struct{})
	wb := launchOnMem(t, r, http.HandlerFunc(func(w http.ResponseWriter, req *http.Request) {
		<-answer
		_, _ = w.Write([]byte(`{}`))
	}))
	r.waitState(t, wb.ID, models.StateStarting)
	ctx := context.Background()
	if err := r.store.SetWorkbenchState(ctx, wb.ID, models.StateStopping, 10, "stopped elsewhere", nil); err != nil {
		t.Fatal(err)
	}
	close(answer)
	waitFor(t, func() bool { return !r.m.isLaunching(wb.ID) })
	got, err := r.store.WorkbenchByID(ctx, wb.ID)
	if err != nil {
		t.Fatal(err)
	}
	if got.State != models.StateStopping || got.Reason != "stopped elsewhere" || got.Endpoint != "" {
		t.Fatalf("after the launch ended: state %s (%q), endpoint %q; want stopping as set meanwhile", got.State, got.Reason, got.Endpoint)
	}
}

// In memory: a launch whose container exited while no portal watched it
// (a bad start command, the portal stopped) fails with Jupyter's exit code
// and last output, and keeps its logs, as a watched launch does; it said
// "the launch was interrupted", and its logs were empty.
func TestMemUnwatchedLaunchFailureSaysWhy(t *testing.T) {
	r := newMemRig(t)
	ctx := context.Background()
	r.exitWhileStarting(t, "/bin/sh: 1: jupyter-lab: not found")
	wb, err := r.store.WorkbenchByID(ctx, r.wb.ID)
	if err != nil {
		t.Fatal(err)
	}
	if wb.State != models.StateFailed || wb.Reason != "Jupyter exited while starting (exit code 127); last output: /bin/sh: 1: jupyter-lab: not found" {
		t.Fatalf("after the reconcile: %s %q, want failed with the exit code and the last output", wb.State, wb.Reason)
	}
	if !strings.Contains(wb.ExitLogs, "jupyter-lab: not found") {
		t.Errorf("exit logs %q, want the container's last lines", wb.ExitLogs)
	}
}

// In memory: auto_resume is kept only for a preemptible run, the only kind
// ever preempted to be resumed; on another it was stored and answered true,
// then dropped in silence (202, false): now it is refused, beside its
// field, with its own code, and nothing is recorded.
func TestMemAutoResumeOnlyForPreemptibleRuns(t *testing.T) {
	r := newQueueRig(t)
	ctx := context.Background()
	_, err := r.m.Launch(ctx, r.alice, LaunchRequest{Name: "plain", Image: "mem", Flavor: r.flavor, AutoResume: true})
	var ve *models.ValidationError
	if !errors.As(err, &ve) || ve.Field != "auto_resume" || ve.Code != "auto_resume_needs_preemptible" {
		t.Fatalf("auto_resume without preemptible: %v, want refused on auto_resume", err)
	}
	if names, err := r.store.WorkbenchNamesOf(ctx, r.alice.ID); err != nil || slices.Contains(slices.Collect(maps.Values(names)), "plain") {
		t.Errorf("the refused launch was recorded: %v (%v)", names, err)
	}
	spot, err := r.m.Launch(ctx, r.alice, LaunchRequest{Name: "spot", Image: "mem", Flavor: r.flavor, Preemptible: true, AutoResume: true})
	if err != nil {
		t.Fatal(err)
	}
	// A preemptible class is a preemptible run, box or not.
	class, err := r.m.Launch(ctx, r.alice, LaunchRequest{Name: "spot-class", Image: "mem", Flavor: r.flavor, Priority: "preemptible", AutoResume: true})
	if err != nil {
		t.Fatal(err)
	}
	for _, wb := range []*models.Workbench{spot, class} {
		got, err := r.store.WorkbenchByID(ctx, wb.ID)
		if err != nil || !got.AutoResume || !wb.AutoResume {
			t.Errorf("%s (preemptible %v): auto_resume %v / stored %v (%v), want true", wb.Name, got.Preemptible, wb.AutoResume, got.AutoResume, err)
		}
	}
}

// In memory: once the container is gone, the logs a script asks for are
// the last lines kept when it ended (the page showed them; the API gave an
// empty body).
func TestMemLogsAfterTheContainerIsGone(t *testing.T) {
	r := newMemRig(t)
	ctx := context.Background()
	r.exitWhileStarting(t, "starting\nloading config\n/bin/sh: 1: jupyter-lab: not found")
	r.rt.Vanish(r.wb.ContainerID, false)
	read := func() string {
		t.Helper()
		rc, err := r.m.Logs(ctx, r.wb.ID, 2, false)
		if err != nil {
			t.Fatal(err)
		}
		defer rc.Close()
		b, _ := io.ReadAll(rc)
		return string(b)
	}
	want := "loading config\n/bin/sh: 1: jupyter-lab: not found\n"
	if got := read(); got != want {
		t.Errorf("logs of a vanished container: %q, want the kept last 2 lines %q", got, want)
	}
	if err := r.store.UpdateWorkbenchFields(ctx, r.wb.ID, models.WorkbenchFields{ContainerID: new("")}); err != nil {
		t.Fatal(err)
	}
	if got := read(); got != want {
		t.Errorf("logs with no container: %q, want %q", got, want)
	}
}

// exitWhileStarting has the rig's workbench's container write logs and
// exit 127 while it starts, with no portal watching, and reconciles.
func (r *memRig) exitWhileStarting(t *testing.T, logs string) {
	t.Helper()
	ctx := context.Background()
	if err := r.store.SetWorkbenchState(ctx, r.wb.ID, models.StateStarting, 50, "", nil); err != nil {
		t.Fatal(err)
	}
	r.rt.SetLogs(r.wb.ContainerID, logs)
	if err := r.rt.Exit(r.wb.ContainerID, 127, false); err != nil {
		t.Fatal(err)
	}
	if err := r.m.Reconcile(ctx); err != nil {
		t.Fatal(err)
	}
}
