package gpu

import (
	"testing"

	"github.com/NVIDIA/go-nvml/pkg/nvml"
	"github.com/NVIDIA/go-nvml/pkg/nvml/mock/dgxh100"
)

// TestSampleReadsMIGInstancesThroughTheirHandles: a MIG-enabled GPU's
// sample carries one reading per MIG instance, under the instance's own
// MIG UUID and GPU instance ID: its own memory figures, and utilisation
// unread (the driver does not answer it per instance) rather than 0%.
func TestSampleReadsMIGInstancesThroughTheirHandles(t *testing.T) {
	server := dgxh100.New()
	dev, _ := server.DeviceGetHandleByIndex(5)
	if r, _ := dev.SetMigMode(nvml.DEVICE_MIG_ENABLE); r != nvml.SUCCESS {
		t.Fatal(r)
	}
	createMIG(t, dev, nvml.GPU_INSTANCE_PROFILE_3_SLICE, nvml.COMPUTE_INSTANCE_PROFILE_3_SLICE)
	createMIG(t, dev, nvml.GPU_INSTANCE_PROFILE_1_SLICE, nvml.COMPUTE_INSTANCE_PROFILE_1_SLICE)
	lib := NewMockMIGHandles(server)
	inv := mustNew(t, "mock:dgxh100", WithNVML(lib, true, "mock:dgxh100"))
	devs, err := inv.Devices(testCtx(t))
	if err != nil {
		t.Fatal(err)
	}
	if len(devs[5].MIG) != 2 {
		t.Fatalf("instances: %+v", devs[5].MIG)
	}
	small := devs[5].MIG[1]
	if small.Profile != "1g.10gb" {
		small = devs[5].MIG[0]
	}
	lib.SetMemUsed(small.UUID, 3000)

	samples, err := inv.Sample(testCtx(t))
	if err != nil {
		t.Fatal(err)
	}
	for i, s := range samples {
		if i != 5 && len(s.MIG) > 0 {
			t.Errorf("GPU %d without MIG has instance readings %+v", i, s.MIG)
		}
	}
	got := samples[5].MIG
	if len(got) != 2 {
		t.Fatalf("MIG readings: %+v", got)
	}
	byUUID := map[string]MIGSample{}
	for _, m := range got {
		byUUID[m.UUID] = m
		if m.Readable(FieldUtil) || m.Readable(FieldMemUtil) || m.UtilPercent != 0 {
			t.Errorf("instance %s: utilisation the driver does not answer per instance is readable: %+v", m.UUID, m)
		}
		if !m.Readable(FieldMemory) {
			t.Errorf("instance %s memory unread", m.UUID)
		}
	}
	s, ok := byUUID[small.UUID]
	if !ok {
		t.Fatalf("no reading for %s in %+v", small.UUID, got)
	}
	if s.MemUsedMiB != 3000 || s.MemFreeMiB != 10240-3000 || s.GPUInstanceID != small.GPUInstanceID {
		t.Errorf("1g.10gb instance read %+v, want 3000 MiB used of 10240, GI %d", s, small.GPUInstanceID)
	}
}

// TestSampleReadsPerProcessUtilisation: processes carry their own SM
// utilisation; a GPU with no process samples (NVML's NOT_FOUND) is a
// readable 0%, a failing GPU leaves per-process utilisation unread.
func TestSampleReadsPerProcessUtilisation(t *testing.T) {
	inv, load := liveH100(t)
	load.Set(0, MockGPULoad{UtilPercent: 70, Processes: []Process{{PID: 11, UsedMemMiB: 100, SMUtilPercent: 60}, {PID: 12, UsedMemMiB: 200, SMUtilPercent: 10}}})
	load.Set(2, MockGPULoad{Fail: true})
	samples, err := inv.Sample(testCtx(t))
	if err != nil {
		t.Fatal(err)
	}
	busy, none, broken := samples[0], samples[1], samples[2]
	if !busy.Readable(FieldProcessUtil) || len(busy.Processes) != 2 ||
		busy.Processes[0].SMUtilPercent != 60 || busy.Processes[1].SMUtilPercent != 10 {
		t.Errorf("per-process utilisation %+v (unread %b)", busy.Processes, busy.Unread)
	}
	if !none.Readable(FieldProcessUtil) {
		t.Error("a GPU without process samples should read as 0% per process, not unread")
	}
	if broken.Readable(FieldProcessUtil) {
		t.Error("a failing GPU's per-process utilisation marked readable")
	}
}
