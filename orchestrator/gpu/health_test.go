package gpu

import (
	"context"
	"strings"
	"sync"
	"testing"

	"github.com/NVIDIA/go-nvml/pkg/nvml"
	"github.com/NVIDIA/go-nvml/pkg/nvml/mock"
	"github.com/NVIDIA/go-nvml/pkg/nvml/mock/dgxh100"
	"github.com/NVIDIA/go-nvml/pkg/nvml/mock/server"
)

func TestHealthFromNVMLErrors(t *testing.T) {
	srv := dgxh100.New()
	lost := srv.Devices[1].(*server.Device)
	lost.GetMemoryInfoFunc = func() (nvml.Memory, nvml.Return) { return nvml.Memory{}, nvml.ERROR_GPU_IS_LOST }
	remapFailed := srv.Devices[4].(*server.Device)
	remapFailed.GetRemappedRowsFunc = func() (int, int, bool, bool, nvml.Return) { return 0, 3, false, true, nvml.SUCCESS }
	remapOK := srv.Devices[5].(*server.Device)
	remapOK.GetRemappedRowsFunc = func() (int, int, bool, bool, nvml.Return) { return 2, 0, false, false, nvml.SUCCESS }
	noUUID := srv.Devices[7].(*server.Device)
	noUUID.GetUUIDFunc = func() (string, nvml.Return) { return "", nvml.ERROR_GPU_IS_LOST }

	inv := mustNew(t, "mock:dgxh100", WithNVML(srv, true, ""))
	if inv.Backend() != "mock" {
		t.Errorf("default simulated backend name = %q", inv.Backend())
	}
	devs, err := inv.Devices(testCtx(t))
	if err != nil {
		t.Fatal(err)
	}
	// A GPU without a readable UUID cannot be addressed, so it is left out.
	if len(devs) != 7 {
		t.Fatalf("got %d devices, want 7 (index 7 has no UUID)", len(devs))
	}
	byIndex := map[int]Device{}
	for _, d := range devs {
		byIndex[d.Index] = d
	}
	if d := byIndex[1]; d.Health != HealthUnhealthy || !strings.Contains(d.HealthDetail, "ERROR_GPU_IS_LOST") {
		t.Errorf("lost GPU: health %q detail %q", d.Health, d.HealthDetail)
	}
	if d := byIndex[4]; d.Health != HealthUnhealthy || !strings.Contains(d.HealthDetail, "row remapping failed") {
		t.Errorf("remap failure: health %q detail %q", d.Health, d.HealthDetail)
	}
	for _, i := range []int{0, 2, 3, 5, 6} {
		if d := byIndex[i]; d.Health != HealthOK {
			t.Errorf("GPU %d: health %q detail %q, want ok", i, d.Health, d.HealthDetail)
		}
	}
	if _, ok := byIndex[7]; ok {
		t.Error("GPU 7 without UUID was listed")
	}
}

// A bare moq mock implements almost nothing; every missing call panics.
// The inventory must still answer, with zero values, and never crash.
func TestBareMockNeverPanics(t *testing.T) {
	dev := &mock.Device{
		GetUUIDFunc: func() (string, nvml.Return) { return "GPU-bare", nvml.SUCCESS },
	}
	lib := &mock.Interface{
		DeviceGetCountFunc:         func() (int, nvml.Return) { return 1, nvml.SUCCESS },
		DeviceGetHandleByIndexFunc: func(int) (nvml.Device, nvml.Return) { return dev, nvml.SUCCESS },
	}
	inv := mustNew(t, "auto", WithNVML(lib, true, "bare"))
	devs, err := inv.Devices(testCtx(t))
	if err != nil || len(devs) != 1 || devs[0].UUID != "GPU-bare" {
		t.Fatalf("Devices = %+v, %v", devs, err)
	}
	if devs[0].Health != HealthUnhealthy {
		t.Errorf("GPU whose name/memory cannot be read should be unhealthy: %+v", devs[0])
	}
	s, err := inv.Sample(testCtx(t))
	if err != nil || len(s) != 1 || s[0].UtilPercent != 0 || s[0].TempC != 0 {
		t.Fatalf("Sample = %+v, %v", s, err)
	}
	_ = inv.Status()
	if err := inv.Close(); err != nil {
		t.Errorf("Close: %v", err)
	}
}

func TestCloseShutsDownOnce(t *testing.T) {
	srv := dgxh100.New()
	var shutdowns int
	srv.ShutdownFunc = func() nvml.Return { shutdowns++; return nvml.SUCCESS }
	inv := mustNew(t, "mock:dgxh100", WithNVML(srv, true, "mock:dgxh100"))
	if err := inv.Close(); err != nil {
		t.Fatal(err)
	}
	if err := inv.Close(); err != nil {
		t.Fatal(err)
	}
	if shutdowns != 1 {
		t.Errorf("Shutdown called %d times, want 1", shutdowns)
	}
	if _, err := inv.Devices(testCtx(t)); err == nil {
		t.Error("Devices after Close should fail, not call into a shut-down NVML")
	}
	if _, err := inv.Sample(testCtx(t)); err == nil {
		t.Error("Sample after Close should fail")
	}
}

func TestCancelledContext(t *testing.T) {
	inv := mustNew(t, "mock:dgxa100")
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	if _, err := inv.Devices(ctx); err == nil {
		t.Error("Devices ignored a cancelled context")
	}
}

// Run with -race: the mock servers are not safe for concurrent use, so the
// backend must serialise calls.
func TestConcurrentUse(t *testing.T) {
	srv := dgxh100.New()
	d0, _ := srv.DeviceGetHandleByIndex(0)
	d0.SetMigMode(nvml.DEVICE_MIG_ENABLE)
	createMIG(t, d0, nvml.GPU_INSTANCE_PROFILE_1_SLICE, nvml.COMPUTE_INSTANCE_PROFILE_1_SLICE)
	inv := mustNew(t, "mock:dgxh100", WithNVML(srv, true, "mock:dgxh100"))
	var wg sync.WaitGroup
	for g := 0; g < 8; g++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := 0; i < 20; i++ {
				if _, err := inv.Devices(context.Background()); err != nil {
					t.Error(err)
					return
				}
				if _, err := inv.Sample(context.Background()); err != nil {
					t.Error(err)
					return
				}
				_ = inv.Status()
			}
		}()
	}
	wg.Wait()
}
