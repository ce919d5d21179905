package orchestrator

import (
	"context"
	"io"
	"net/http"
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
// ever preempted to be resumed; on another it was stored and answered true.
func TestMemAutoResumeOnlyForPreemptibleRuns(t *testing.T) {
	r := newQueueRig(t)
	ctx := context.Background()
	plain, err := r.m.Launch(ctx, r.alice, LaunchRequest{Name: "plain", Image: "mem", Flavor: r.flavor, AutoResume: true})
	if err != nil {
		t.Fatal(err)
	}
	spot, err := r.m.Launch(ctx, r.alice, LaunchRequest{Name: "spot", Image: "mem", Flavor: r.flavor, Preemptible: true, AutoResume: true})
	if err != nil {
		t.Fatal(err)
	}
	for _, c := range []struct {
		wb   *models.Workbench
		want bool
	}{{plain, false}, {spot, true}} {
		got, err := r.store.WorkbenchByID(ctx, c.wb.ID)
		if err != nil || got.AutoResume != c.want || c.wb.AutoResume != c.want {
			t.Errorf("%s (preemptible %v): auto_resume %v / stored %v (%v), want %v", c.wb.Name, got.Preemptible, c.wb.AutoResume, got.AutoResume, err, c.want)
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
