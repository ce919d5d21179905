package orchestrator

import (
	"context"
	"errors"
	"fmt"
	"testing"

	"workbench/models"
	"workbench/orchestrator/runtime"
)

// A stop while the engine cannot be reached says so (errors.Is
// ErrEngineUnavailable, which the API answers 503, not "force the stop"),
// and stays recorded: the workbench is stopping until the engine is back.
func TestStopWithTheEngineUnreachableSaysSo(t *testing.T) {
	r := newMemRig(t)
	ctx := context.Background()
	r.rt.Fail("Inspect", fmt.Errorf("inspect: %w: dial tcp 127.0.0.1:1: connection refused", runtime.ErrEngineUnavailable))
	err := r.m.Stop(ctx, r.wb.ID, "")
	var se *StopError
	if !errors.As(err, &se) || !errors.Is(err, ErrEngineUnavailable) {
		t.Fatalf("stop with the engine unreachable: %v; want a StopError that is ErrEngineUnavailable", err)
	}
	wb, err := r.store.WorkbenchByID(ctx, r.wb.ID)
	if err != nil || wb.State != models.StateStopping {
		t.Fatalf("after the failed stop: %v, state %q; want stopping (the stop recorded)", err, wb.State)
	}
}
