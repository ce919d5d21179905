package gpu

import (
	"encoding/json"
	"strings"
	"testing"
)

func TestMockServers(t *testing.T) {
	cases := []struct {
		mode      string
		model     string
		minMemMiB uint64
		maxMemMiB uint64
	}{
		{"mock:dgxa100", "A100", 40000, 41000},
		{"mock:dgxh100", "H100", 80000, 82000},
		{"mock:dgxh200", "H200", 140001, 146000},
	}
	for _, tc := range cases {
		t.Run(tc.mode, func(t *testing.T) {
			inv := mustNew(t, tc.mode)
			if !inv.Simulated() {
				t.Error("mock backend must report Simulated() == true")
			}
			if inv.Backend() != tc.mode {
				t.Errorf("Backend() = %q, want %q", inv.Backend(), tc.mode)
			}
			if st := inv.Status(); !strings.Contains(st, "simulated") || !strings.Contains(st, "8 GPUs") {
				t.Errorf("Status() = %q, want it to say simulated and 8 GPUs", st)
			}
			devs, err := inv.Devices(testCtx(t))
			if err != nil {
				t.Fatal(err)
			}
			if len(devs) != 8 {
				t.Fatalf("got %d devices, want 8", len(devs))
			}
			uuids := map[string]bool{}
			for i, d := range devs {
				if d.Index != i {
					t.Errorf("device %d has index %d", i, d.Index)
				}
				if !strings.HasPrefix(d.UUID, "GPU-") || uuids[d.UUID] {
					t.Errorf("device %d UUID %q empty, malformed or duplicate", i, d.UUID)
				}
				uuids[d.UUID] = true
				if !strings.Contains(d.Model, tc.model) {
					t.Errorf("device %d model %q does not contain %q", i, d.Model, tc.model)
				}
				if d.MemoryMiB < tc.minMemMiB || d.MemoryMiB > tc.maxMemMiB {
					t.Errorf("device %d memory %d MiB not in [%d, %d]", i, d.MemoryMiB, tc.minMemMiB, tc.maxMemMiB)
				}
				if d.Health != HealthOK || d.HealthDetail != "" {
					t.Errorf("device %d health %q (%s), want ok", i, d.Health, d.HealthDetail)
				}
				if d.MIGEnabled || len(d.MIG) != 0 {
					t.Errorf("device %d: MIG on a fresh mock", i)
				}
			}
			// Same inventory, same UUIDs: they are the keys of database rows.
			again, err := inv.Devices(testCtx(t))
			if err != nil || len(again) != 8 || again[3].UUID != devs[3].UUID {
				t.Errorf("second Devices call differs: %v", err)
			}

			samples, err := inv.Sample(testCtx(t))
			if err != nil {
				t.Fatal(err)
			}
			if len(samples) != len(devs) {
				t.Fatalf("Sample returned %d readings for %d GPUs", len(samples), len(devs))
			}
			for i, s := range samples {
				if s.UUID != devs[i].UUID || s.At.IsZero() {
					t.Errorf("sample %d = %+v, want UUID %s and a time", i, s, devs[i].UUID)
				}
			}
		})
	}
}

// Simulated GPUs keep their UUIDs across restarts (new inventories), as
// real GPUs do; different servers do not share UUIDs.
func TestMockUUIDsStable(t *testing.T) {
	list := func(mode string) []string {
		devs, err := mustNew(t, mode).Devices(testCtx(t))
		if err != nil {
			t.Fatal(err)
		}
		var out []string
		for _, d := range devs {
			out = append(out, d.UUID)
		}
		return out
	}
	a, b := list("mock:dgxh100"), list("mock:dgxh100")
	if strings.Join(a, ",") != strings.Join(b, ",") {
		t.Errorf("UUIDs changed between two inventories:\n%v\n%v", a, b)
	}
	if c := list("mock:dgxh200"); c[0] == a[0] {
		t.Errorf("dgxh100 and dgxh200 share UUID %s", a[0])
	}
	if len(a[0]) != len("GPU-")+36 {
		t.Errorf("UUID %q is not in NVML's GPU-<uuid> format", a[0])
	}
}

// The JSON names are a contract with the API layer and scripts.
func TestDeviceJSONShape(t *testing.T) {
	d := Device{Index: 1, UUID: "GPU-x", Model: "m", MemoryMiB: 2, Health: HealthOK,
		MIGEnabled: true, MIG: []MIGInstance{{UUID: "MIG-y", Profile: "1g.10gb", MemoryMiB: 3, GPUInstanceID: 4, ComputeInstanceID: 5}}}
	b, err := json.Marshal(d)
	if err != nil {
		t.Fatal(err)
	}
	want := `{"index":1,"uuid":"GPU-x","model":"m","memory_mib":2,"mig_enabled":true,` +
		`"mig_instances":[{"uuid":"MIG-y","profile":"1g.10gb","memory_mib":3,"gpu_instance_id":4,"compute_instance_id":5}],"health":"ok"}`
	if string(b) != want {
		t.Errorf("JSON\n got %s\nwant %s", b, want)
	}
}
