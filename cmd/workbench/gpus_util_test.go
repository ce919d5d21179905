package main

import (
	"bytes"
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"workbench/handlers"
	"workbench/models"
	"workbench/orchestrator"
)

// `workbench gpus --utilisation --json` reports the rolled-up telemetry of
// the data directory as the admin API does: per GPU (an unread minute is
// not idle), per unit (a MIG instance with its share of energy, energy
// "not available" where none was measured), with the held-below-threshold
// figures; the table form names the same rows.
func TestGPUsUtilisationFromRollup(t *testing.T) {
	dir := t.TempDir()
	ctx := context.Background()
	s, err := models.Open(ctx, dir, nil)
	if err != nil {
		t.Fatal(err)
	}
	m0 := time.Now().UTC().Add(-2 * time.Hour).Truncate(time.Minute).Unix()
	rows := []models.GPUMinute{
		// Held, 2% (below 5%), 1.2 MJ measured.
		{GPUUUID: "GPU-a", Minute: m0, Samples: 4, UtilSamples: 4, UtilSum: 8, WorkbenchID: "wb1", GPUModel: "NVIDIA H100 80GB HBM3", EnergyMJ: 1_200_000, EnergySamples: 4},
		// Held, could not read: neither busy nor idle; no energy measured.
		{GPUUUID: "GPU-a", Minute: m0 + 60, Samples: 4, UnreadSamples: 4, WorkbenchID: "wb1", GPUModel: "NVIDIA H100 80GB HBM3"},
	}
	units := []models.GPUUnitMinute{
		{UnitUUID: "MIG-1", WorkbenchID: "wb2", Minute: m0, GPUUUID: "GPU-b", Kind: models.UnitMIG, Profile: "1g.10gb", GPUModel: "NVIDIA H100 80GB HBM3",
			Samples: 4, UnreadSamples: 4, MemSamples: 4, MemUsedMaxMiB: 4096, EnergyMJ: 300_000, EnergySamples: 4, EnergyBasis: "mig_slices"},
		{UnitUUID: "MIG-2", Minute: m0, GPUUUID: "GPU-b", Kind: models.UnitMIG, Profile: "1g.10gb", GPUModel: "NVIDIA H100 80GB HBM3",
			Samples: 4, UtilSamples: 4, UtilSum: 200},
	}
	if err := s.SaveGPURollup(ctx, rows, units); err != nil {
		t.Fatal(err)
	}
	s.Close()

	out, _, err := runCLI(t, "", "gpus", "--utilisation", "--json", "--gpus", "none", "--data-dir", dir, "--bucket", "week", "--days", "7")
	if err != nil {
		t.Fatal(err)
	}
	var rep handlers.APIUtilisation
	dec := json.NewDecoder(bytes.NewReader([]byte(out)))
	dec.DisallowUnknownFields()
	if err := dec.Decode(&rep); err != nil {
		t.Fatalf("not the API's JSON: %v\n%s", err, out)
	}
	if rep.Bucket != "week" || len(rep.ByGPU) != 1 || rep.ByGPU[0].Key != "GPU-a" {
		t.Fatalf("report %+v", rep)
	}
	g := rep.ByGPU[0]
	if g.AllocatedHours != 0.033 || g.HeldBelowThresholdHours != 0.017 || g.HeldUnreadHours != 0.017 || g.EnergyMJ == nil || *g.EnergyMJ != 1_200_000 {
		t.Errorf("GPU-a %+v (energy %v)", g, g.EnergyMJ)
	}
	if len(rep.ByUnit) != 2 {
		t.Fatalf("units %+v", rep.ByUnit)
	}
	held, free := rep.ByUnit[0], rep.ByUnit[1]
	if held.UnitUUID != "MIG-1" || held.Profile != "1g.10gb" || held.AllocatedHours != 0.017 || held.UsedPercent != nil ||
		held.EnergyMJ == nil || *held.EnergyMJ != 300_000 {
		t.Errorf("held MIG instance %+v", held)
	}
	if free.UnitUUID != "MIG-2" || free.AllocatedHours != 0 || free.EnergyMJ != nil {
		t.Errorf("free MIG instance %+v, want no energy (not measured, not 0)", free)
	}

	table, _, err := runCLI(t, "", "gpus", "--utilisation", "--gpus", "none", "--data-dir", dir)
	if err != nil {
		t.Fatal(err)
	}
	// The held minutes' workbenches have no record: no user, no group.
	for _, want := range []string{"GPU-a", "mig MIG-1", "n/a", "idle below 5%", "group  (no group)"} {
		if !strings.Contains(table, want) {
			t.Errorf("table lacks %q:\n%s", want, table)
		}
	}
	// A flag it cannot use is refused before any work: no inventory scan,
	// no database opened (or created) in the data directory.
	fresh := filepath.Join(t.TempDir(), "never-made")
	for _, bad := range [][]string{{"--bucket", "year"}, {"--days", "0"}} {
		_, errOut, err := runCLI(t, "", append([]string{"gpus", "--utilisation", "--gpus", "none", "--data-dir", fresh}, bad...)...)
		if err == nil || !strings.Contains(err.Error(), bad[0]) {
			t.Errorf("%v accepted: %v", bad, err)
		}
		if _, statErr := os.Stat(fresh); !os.IsNotExist(statErr) || errOut != "" {
			t.Errorf("%v: did work before refusing (data directory: %v; stderr %q)", bad, statErr, errOut)
		}
	}
}

// A drained GPU that is still in use says so in the table.
func TestGPUStateTextSaysDrained(t *testing.T) {
	for _, c := range []struct {
		g    orchestrator.PoolGPU
		want string
	}{
		{orchestrator.PoolGPU{State: orchestrator.GPUInUse, Drained: true}, "in_use, drained"},
		{orchestrator.PoolGPU{State: orchestrator.GPUDrained, Drained: true}, "drained"},
		{orchestrator.PoolGPU{State: orchestrator.GPUFree}, "free"},
	} {
		if got := gpuStateText(c.g); got != c.want {
			t.Errorf("%+v: %q, want %q", c.g, got, c.want)
		}
	}
}
