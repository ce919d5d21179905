package main

import (
	"context"
	"encoding/json"
	"strings"
	"testing"

	"workbench/models"
	"workbench/web"
)

// `workbench gpus` beside a portal reads the GPUs the portal serves: told
// nothing else it said "running without GPUs" on a host without a driver
// while the portal served 8 simulated H100s, one of them in MIG. --gpus
// still says otherwise.
func TestGPUsReadWhatServeServes(t *testing.T) {
	dir := portalData(t)
	ctx := context.Background()
	s, err := models.Open(ctx, dir, nil)
	if err != nil {
		t.Fatal(err)
	}
	// What serve records when it starts (serve.go).
	err = recordGPUSource(ctx, s, web.Config{GPUs: "mock:dgxh100", MockMIG: "7:1g.10gb*7"})
	s.Close()
	if err != nil {
		t.Fatal(err)
	}
	t.Setenv("WORKBENCH_GPUS", "")
	out, _, err := runCLI(t, "", "gpus", "--json", "--data-dir", dir)
	if err != nil {
		t.Fatal(err)
	}
	var inv struct {
		Items []struct {
			Model      string `json:"model"`
			MIGEnabled bool   `json:"mig_enabled"`
		} `json:"items"`
		Simulated bool `json:"simulated"`
	}
	if err := json.Unmarshal([]byte(out), &inv); err != nil {
		t.Fatalf("not JSON: %v\n%s", err, out)
	}
	if len(inv.Items) != 8 || !inv.Simulated || !strings.Contains(inv.Items[0].Model, "H100") || !inv.Items[7].MIGEnabled {
		t.Fatalf("gpus beside a mock:dgxh100 portal with MIG on GPU 7: %s", out)
	}
	if out, _, err := runCLI(t, "", "gpus", "--json", "--gpus", "none", "--data-dir", dir); err != nil || !strings.Contains(out, `"items": []`) {
		t.Fatalf("--gpus none beside it: %v %s", err, out)
	}
}
