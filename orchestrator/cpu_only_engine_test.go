package orchestrator

import (
	"context"
	"io"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/docker/docker/api/types/container"

	"workbench/models"
	"workbench/orchestrator/runtime"
)

// homeFile writes (body != "") or reads a file in the workbench's home
// through the fake Jupyter's homefile endpoint, at the address the proxy
// uses.
func homeFile(t *testing.T, wb *models.Workbench, name, body string) (int, string) {
	t.Helper()
	method := http.MethodGet
	if body != "" {
		method = http.MethodPost
	}
	req, err := http.NewRequest(method, "http://"+wb.Endpoint+BaseURL(wb.ID)+"api/homefile?name="+name, strings.NewReader(body))
	if err != nil {
		t.Fatal(err)
	}
	req.Header.Set("Authorization", "token "+wb.Token)
	res, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatalf("%s homefile: %v", method, err)
	}
	defer res.Body.Close()
	b, _ := io.ReadAll(res.Body)
	return res.StatusCode, string(b)
}

// Start without a GPU on the real engine: a stopped one-GPU workbench is
// started as its flavor's CPU-only twin. The container is recreated in the
// twin's shape (no device request, no GPU in its environment, the twin's
// CPU and memory limits) on the same home volume, so a file written with
// the GPU is still there; no GPU is bound; the usage interval is the
// twin's shape and the ledger has no GPU line. "Restart with GPUs" then
// brings it back with a GPU and the same home.
func TestEngineStartWithoutGPUKeepsHomeAndBillsTheCPUShape(t *testing.T) {
	r := newLifecycleRig(t, nil)
	ctx := context.Background()
	wb := r.launchRunning(t, "cpu-twin")
	if len(wb.GPUs) != 1 {
		t.Fatalf("launched with GPUs %v, want 1", wb.GPUs)
	}
	if code, body := homeFile(t, wb, "setup.txt", "installed"); code != http.StatusNoContent {
		t.Fatalf("write home file: %d %s", code, body)
	}
	gpuInfo, err := r.cli.ContainerInspect(ctx, wb.ContainerID)
	if err != nil {
		t.Fatal(err)
	}

	fl, err := r.store.FlavorByNameOrID(ctx, r.flavor)
	if err != nil {
		t.Fatal(err)
	}
	twin := &models.Flavor{Name: "cpu twin", CPUMilli: 500, MemoryMiB: 256, ShmMiB: 64, Enabled: true}
	if err := r.store.CreateFlavor(ctx, twin); err != nil {
		t.Fatal(err)
	}
	// Not yet a twin: the refusal says an admin can name one.
	if err := r.m.Stop(ctx, wb.ID, ""); err != nil {
		t.Fatal(err)
	}
	r.assertFullyStopped(t, wb.ID)
	err = r.m.StartAs(ctx, wb.ID, r.owner, StartOptions{CPUOnly: true})
	if re, ok := err.(*RefusedError); !ok || re.Code != "no_cpu_twin" {
		t.Fatalf("CPU-only start without a twin: %v, want a no_cpu_twin refusal", err)
	}
	fl.CPUTwinID = twin.ID
	if err := r.store.UpdateFlavor(ctx, fl); err != nil {
		t.Fatal(err)
	}

	if err := r.m.StartAs(ctx, wb.ID, r.owner, StartOptions{CPUOnly: true}); err != nil {
		t.Fatalf("start without GPU: %v", err)
	}
	cpu := r.waitState(t, wb.ID, models.StateRunning)
	if !cpu.CPUOnly() || cpu.ShapeFlavorID() != twin.ID {
		t.Errorf("record: cpu-only %v, run flavor %d, want the twin %d", cpu.CPUOnly(), cpu.RunFlavorID, twin.ID)
	}
	if len(cpu.GPUs) != 0 {
		t.Errorf("GPUs bound in CPU-only mode: %v", cpu.GPUs)
	}
	info, err := r.cli.ContainerInspect(ctx, cpu.ContainerID)
	if err != nil {
		t.Fatal(err)
	}
	if cpu.ContainerID == wb.ContainerID {
		t.Errorf("the GPU container was reused for the CPU-only shape")
	}
	if len(info.HostConfig.DeviceRequests) != 0 {
		t.Errorf("device requests in CPU-only mode: %+v", info.HostConfig.DeviceRequests)
	}
	for _, kv := range info.Config.Env {
		if strings.HasPrefix(kv, runtime.EnvSimulatedGPUs+"=") && kv != runtime.EnvSimulatedGPUs+"=" {
			t.Errorf("GPU in the CPU-only container's environment: %s", kv)
		}
	}
	if info.HostConfig.NanoCPUs != 500_000_000 || info.HostConfig.Memory != 256<<20 {
		t.Errorf("limits: %d nano-CPUs, %d bytes; want the twin's 0.5 CPU and 256 MiB", info.HostConfig.NanoCPUs, info.HostConfig.Memory)
	}
	if home, was := homeVolumeOf(info.Mounts), homeVolumeOf(gpuInfo.Mounts); home == "" || home != was {
		t.Errorf("home volume %q, want the GPU run's %q", home, was)
	}
	if code, body := homeFile(t, cpu, "setup.txt", ""); code != http.StatusOK || body != "installed" {
		t.Errorf("home file in CPU-only mode: %d %q, want the file written with the GPU", code, body)
	}

	// Back with GPUs while none is free: the CPU-only run stops and waits
	// in the queue (home kept); once a GPU frees, the queue starts it with
	// its GPU.
	all := mustNeed(t, r, fl).Candidates
	for _, g := range all {
		if err := r.store.SetGPUDrained(ctx, g, true, "test", "all busy"); err != nil {
			t.Fatal(err)
		}
	}
	if err := r.m.RestartWithGPUs(ctx, wb.ID, r.owner); err != nil {
		t.Fatalf("restart with GPUs while none is free: %v, want it to wait in the queue", err)
	}
	if queued := r.waitState(t, wb.ID, models.StateQueued); queued.CPUOnly() {
		t.Errorf("waiting for GPUs, the workbench is still in the CPU-only shape")
	}
	for _, g := range all {
		_ = r.store.SetGPUDrained(ctx, g, false, "test", "")
	}
	if err := r.m.Drain(ctx); err != nil {
		t.Fatal(err)
	}
	back := waitRunningWith(t, r, wb.ID, func(w *models.Workbench) bool { return len(w.GPUs) == 1 })
	if back.CPUOnly() {
		t.Errorf("still CPU-only after restart with GPUs")
	}
	if code, body := homeFile(t, back, "setup.txt", ""); code != http.StatusOK || body != "installed" {
		t.Errorf("home file after restart with GPUs: %d %q", code, body)
	}

	// Billing: the CPU-only interval has the twin's shape and no GPU line.
	ivs, err := r.store.IntervalsOf(ctx, wb.ID)
	if err != nil {
		t.Fatal(err)
	}
	var cpuIv *models.UsageInterval
	for i := range ivs {
		if ivs[i].GPUCount == 0 {
			cpuIv = &ivs[i]
		}
	}
	if len(ivs) != 3 || cpuIv == nil {
		t.Fatalf("intervals %+v, want GPU, CPU-only, GPU", ivs)
	}
	if cpuIv.CPUMilli != 500 || cpuIv.MemoryMiB != 256 || cpuIv.GPUModel != "" || cpuIv.EndedAt == nil {
		t.Errorf("CPU-only interval %+v, want the twin's 500 m / 256 MiB, closed", *cpuIv)
	}
	if _, err := r.m.Billing().BillOnce(ctx); err != nil {
		t.Fatal(err)
	}
	lines, err := r.store.Statement(ctx, r.owner.ID, time.Now().Add(-time.Hour), time.Now().Add(time.Hour))
	if err != nil {
		t.Fatal(err)
	}
	var cpuLines int
	for _, l := range lines {
		if l.IntervalID != nil && *l.IntervalID == cpuIv.ID {
			cpuLines++
			if l.GPUModel != "" || l.Resource == "gpu" {
				t.Errorf("GPU charged for the CPU-only run: %+v", l)
			}
		}
	}
	if cpuLines == 0 {
		t.Errorf("no ledger line for the CPU-only run")
	}
	if err := r.m.Stop(ctx, wb.ID, ""); err != nil {
		t.Fatal(err)
	}
	r.assertFullyStopped(t, wb.ID)
}

func homeVolumeOf(ms []container.MountPoint) string {
	for _, m := range ms {
		if m.Destination == "/home/jovyan" {
			return m.Name
		}
	}
	return ""
}

func mustNeed(t *testing.T, r *lifecycleRig, fl *models.Flavor) models.GPUNeed {
	t.Helper()
	need, err := r.m.pool.Need(context.Background(), fl)
	if err != nil {
		t.Fatal(err)
	}
	return need
}

// waitRunningWith waits until the record is running and ok holds.
func waitRunningWith(t *testing.T, r *lifecycleRig, id string, ok func(*models.Workbench) bool) *models.Workbench {
	t.Helper()
	deadline := time.Now().Add(2 * time.Minute)
	for {
		wb, err := r.store.WorkbenchByID(context.Background(), id)
		if err != nil {
			t.Fatal(err)
		}
		if wb.State == models.StateRunning && ok(wb) {
			return wb
		}
		if wb.State == models.StateFailed || time.Now().After(deadline) {
			t.Fatalf("workbench %s (%s), want running as asked", wb.State, wb.Reason)
		}
		time.Sleep(50 * time.Millisecond)
	}
}
