package models

import (
	"context"
	"errors"
	"sync"
	"testing"
	"time"
)

// A transition moves a workbench only from the states the caller expects,
// writes its typed fields and a history line.
func TestTransitionFromExpectedState(t *testing.T) {
	ctx := context.Background()
	f := newMoneyFixture(t) // a requested workbench with an open interval
	err := f.s.TransitionWorkbench(ctx, f.wb.ID, Transition{
		From: []string{StateRequested}, To: StatePulling, Progress: 5,
		Set: WorkbenchFields{ReasonDetails: new(""), ContainerID: new("c1")},
	})
	if err != nil {
		t.Fatal(err)
	}
	wb, err := f.s.WorkbenchByID(ctx, f.wb.ID)
	if err != nil {
		t.Fatal(err)
	}
	if wb.State != StatePulling || wb.Progress != 5 || wb.ContainerID != "c1" {
		t.Fatalf("after the transition: state %s progress %d container %q", wb.State, wb.Progress, wb.ContainerID)
	}
	hist, err := f.s.WorkbenchHistory(ctx, f.wb.ID)
	if err != nil || len(hist) != 2 || !(hist[0].State == StatePulling || hist[1].State == StatePulling) {
		t.Fatalf("history %+v (%v): want requested and pulling", hist, err)
	}
}

// The precondition: a transition from a state the workbench is not in is
// refused with ErrStateChanged and changes nothing (state, fields, history,
// metering).
func TestTransitionRefusedWhenStateChanged(t *testing.T) {
	ctx := context.Background()
	f := newMoneyFixture(t)
	if err := f.s.SetWorkbenchState(ctx, f.wb.ID, StateStopping, 10, "stopped by you", nil); err != nil {
		t.Fatal(err)
	}
	before, _ := f.s.WorkbenchHistory(ctx, f.wb.ID)
	// A launch that did not see the stop tries to declare it running.
	err := f.s.TransitionWorkbench(ctx, f.wb.ID, Transition{
		From: LaunchingStates, To: StateRunning, Progress: 100,
		Set: WorkbenchFields{Endpoint: new("10.0.0.2:8888"), StartedAt: new(time.Now()), ClearStoppedAt: true},
	})
	if !errors.Is(err, ErrStateChanged) {
		t.Fatalf("err = %v; want ErrStateChanged", err)
	}
	var sc *StateChangedError
	if !errors.As(err, &sc) || sc.Got != StateStopping || sc.To != StateRunning {
		t.Fatalf("err = %#v; want a StateChangedError that found stopping", err)
	}
	wb, err := f.s.WorkbenchByID(ctx, f.wb.ID)
	if err != nil {
		t.Fatal(err)
	}
	if wb.State != StateStopping || wb.Progress != 10 || wb.Endpoint != "" || wb.StartedAt != nil {
		t.Fatalf("a refused transition wrote: state %s progress %d endpoint %q started %v", wb.State, wb.Progress, wb.Endpoint, wb.StartedAt)
	}
	after, _ := f.s.WorkbenchHistory(ctx, f.wb.ID)
	if len(after) != len(before) {
		t.Fatalf("a refused transition added history: %d → %d lines", len(before), len(after))
	}
	// Nor may a refused stop end metering.
	err = f.s.TransitionWorkbench(ctx, f.wb.ID, Transition{From: []string{StateRunning}, To: StateStopped})
	if !errors.Is(err, ErrStateChanged) {
		t.Fatalf("stopped from running while stopping: %v; want ErrStateChanged", err)
	}
	if _, err := f.s.OpenIntervalOf(ctx, f.wb.ID); err != nil {
		t.Fatalf("a refused stop closed the interval: %v", err)
	}
}

// Stopped from stopping ends metering at the given time in the same
// transaction; a missing workbench is ErrNotFound; From is required.
func TestTransitionToStoppedClosesMetering(t *testing.T) {
	ctx := context.Background()
	f := newMoneyFixture(t)
	end := time.Date(2030, 3, 10, 10, 7, 3, 0, time.UTC)
	if err := f.s.TransitionWorkbench(ctx, f.wb.ID, Transition{From: ActiveStates, To: StateStopping, Progress: 10}); err != nil {
		t.Fatal(err)
	}
	if err := f.s.TransitionWorkbench(ctx, f.wb.ID, Transition{
		From: []string{StateStopping}, To: StateStopped,
		Set: WorkbenchFields{Endpoint: new(""), StoppedAt: &end},
	}); err != nil {
		t.Fatal(err)
	}
	ivs, err := f.s.IntervalsOf(ctx, f.wb.ID)
	if err != nil || len(ivs) != 1 || ivs[0].EndedAt == nil || !ivs[0].EndedAt.Equal(end) || ivs[0].EndReason != StateStopped {
		t.Fatalf("intervals %+v (%v): want one closed at %s", ivs, err, end)
	}
	if err := f.s.TransitionWorkbench(ctx, "nope", Transition{From: ActiveStates, To: StateStopping}); !errors.Is(err, ErrNotFound) {
		t.Fatalf("missing workbench: %v; want ErrNotFound", err)
	}
	if err := f.s.TransitionWorkbench(ctx, f.wb.ID, Transition{To: StateRunning}); err == nil || errors.Is(err, ErrStateChanged) {
		t.Fatalf("a transition without From: %v; want a usage error", err)
	}
}

// Compare-and-set under contention on a real SQLite file: of many writers
// that all expect "requested", exactly one moves the workbench.
func TestTransitionOneWinnerUnderContention(t *testing.T) {
	ctx := context.Background()
	f := newMoneyFixture(t)
	const n = 8
	var wg sync.WaitGroup
	errs := make([]error, n)
	for i := range n {
		wg.Add(1)
		go func() {
			defer wg.Done()
			errs[i] = f.s.TransitionWorkbench(ctx, f.wb.ID, Transition{From: []string{StateRequested}, To: StatePulling})
		}()
	}
	wg.Wait()
	won := 0
	for _, err := range errs {
		switch {
		case err == nil:
			won++
		case !errors.Is(err, ErrStateChanged):
			t.Fatalf("unexpected error: %v", err)
		}
	}
	if won != 1 {
		t.Fatalf("%d writers moved the workbench; want exactly 1", won)
	}
}

// ClearStoppedAt empties stopped_at (a new run); UpdateWorkbenchFields sets
// typed columns without touching the state.
func TestWorkbenchFieldsClearAndUpdate(t *testing.T) {
	ctx := context.Background()
	f := newMoneyFixture(t)
	if err := f.s.SetWorkbenchState(ctx, f.wb.ID, StateStarting, 85, "", map[string]any{"stopped_at": time.Now()}); err != nil {
		t.Fatal(err)
	}
	if err := f.s.UpdateWorkbenchFields(ctx, f.wb.ID, WorkbenchFields{ExitLogs: new("bye"), ContainerID: new("c9")}); err != nil {
		t.Fatal(err)
	}
	if err := f.s.TransitionWorkbench(ctx, f.wb.ID, Transition{From: []string{StateStarting}, To: StateRunning, Progress: 100,
		Set: WorkbenchFields{ClearStoppedAt: true, RuntimeExtensionS: new(int64(0))}}); err != nil {
		t.Fatal(err)
	}
	wb, err := f.s.WorkbenchByID(ctx, f.wb.ID)
	if err != nil {
		t.Fatal(err)
	}
	if wb.State != StateRunning || wb.StoppedAt != nil || wb.ExitLogs != "bye" || wb.ContainerID != "c9" {
		t.Fatalf("got state %s stopped_at %v exit logs %q container %q", wb.State, wb.StoppedAt, wb.ExitLogs, wb.ContainerID)
	}
}
