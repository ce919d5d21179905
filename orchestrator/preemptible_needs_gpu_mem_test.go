package orchestrator

import (
	"context"
	"errors"
	"maps"
	"slices"
	"strings"
	"testing"

	"workbench/models"
)

// In memory: preemptible asked on a flavor without GPUs is refused on its
// field with its own code, and nothing is recorded; it was dropped in
// silence (202, "preemptible": false), a discount promised and never
// given. Asked with auto-resume, the one refusal says to leave both off.
// A preemptible class on such a flavor stays accepted (a priority only).
func TestMemPreemptibleOnAFlavorWithoutGPUsIsRefused(t *testing.T) {
	t.Parallel()
	r := newQueueRig(t)
	ctx := context.Background()
	r.addCPUTwin(t) // "cpu twin": no GPU
	for _, req := range []LaunchRequest{
		{Name: "cpu-spot", Image: "mem", Flavor: "cpu twin", Preemptible: true},
		{Name: "cpu-spot-resume", Image: "mem", Flavor: "cpu twin", Preemptible: true, AutoResume: true},
	} {
		_, err := r.m.Launch(ctx, r.alice, req)
		var ve *models.ValidationError
		if !errors.As(err, &ve) || ve.Field != "preemptible" || ve.Code != "preemptible_needs_gpu" || !strings.Contains(ve.Message, "leave preemptible") ||
			req.AutoResume != strings.Contains(ve.Message, "auto-resume off") {
			t.Errorf("%s: %v, want refused on preemptible (preemptible_needs_gpu)", req.Name, err)
		}
	}
	if names, err := r.store.WorkbenchNamesOf(ctx, r.alice.ID); err != nil || slices.ContainsFunc(slices.Collect(maps.Values(names)), func(n string) bool { return strings.HasPrefix(n, "cpu-spot") }) {
		t.Errorf("a refused launch was recorded: %v (%v)", names, err)
	}
	wb, err := r.m.Launch(ctx, r.alice, LaunchRequest{Name: "cpu-class", Image: "mem", Flavor: "cpu twin", Priority: "preemptible"})
	if err != nil || wb.Preemptible {
		t.Fatalf("preemptible class on a CPU flavor: %v, preemptible %v; want accepted, not preemptible", err, wb != nil && wb.Preemptible)
	}
	r.m.Wait()
}

// In memory: "Start without GPU" of a preemptible GPU workbench is not
// refused: it runs as the CPU-only twin, metered at the standard tier (the
// preemptible price is a GPU discount, and a run without GPUs is never
// preempted), and the workbench stays preemptible for its next run with
// GPUs.
func TestMemStartWithoutGPUOfAPreemptibleWorkbench(t *testing.T) {
	t.Parallel()
	r := newQueueRig(t)
	ctx := context.Background()
	r.addCPUTwin(t)
	wb := r.waitState(t, r.launch(t, r.alice, "spot", LaunchRequest{Preemptible: true}).ID, models.StateRunning)
	if !wb.Preemptible {
		t.Fatal("launched not preemptible")
	}
	if err := r.m.Stop(ctx, wb.ID, ""); err != nil {
		t.Fatal(err)
	}
	if err := r.m.StartAs(ctx, wb.ID, r.alice, StartOptions{CPUOnly: true}); err != nil {
		t.Fatalf("start without GPU of a preemptible workbench: %v", err)
	}
	cpu := r.waitState(t, wb.ID, models.StateRunning)
	if !cpu.CPUOnly() || len(cpu.GPUs) != 0 || !cpu.Preemptible {
		t.Fatalf("CPU-only run: cpu-only %v, GPUs %v, preemptible %v", cpu.CPUOnly(), cpu.GPUs, cpu.Preemptible)
	}
	var iv *models.UsageInterval
	waitFor(t, func() bool {
		var err error
		iv, err = r.store.OpenIntervalOf(ctx, wb.ID)
		return err == nil
	})
	if iv.Tier != "" || iv.GPUCount != 0 {
		t.Errorf("CPU-only run metered at tier %q with %d GPUs, want the standard tier and none", iv.Tier, iv.GPUCount)
	}
	r.m.Wait()
}
