package gpu

import (
	"strings"
	"testing"

	"github.com/NVIDIA/go-nvml/pkg/nvml"
)

func TestNoneMode(t *testing.T) {
	inv := mustNew(t, "none")
	devs, err := inv.Devices(testCtx(t))
	if err != nil || devs == nil || len(devs) != 0 {
		t.Fatalf("none: Devices = %v, %v; want empty non-nil list", devs, err)
	}
	s, err := inv.Sample(testCtx(t))
	if err != nil || len(s) != 0 {
		t.Fatalf("none: Sample = %v, %v", s, err)
	}
	if inv.Simulated() || inv.Backend() != "none" || inv.Status() == "" {
		t.Errorf("none: simulated=%v backend=%q status=%q", inv.Simulated(), inv.Backend(), inv.Status())
	}
}

// "auto" must use the real driver or nothing — never a mock. This machine
// has no NVIDIA driver, so it gets the null backend with the reason; on a
// GPU host the same test checks the real backend instead.
func TestAutoMode(t *testing.T) {
	// Ask NVML directly whether this host has a driver, so the expectation
	// does not depend on what New decided.
	probe := nvml.New()
	hasDriver := probe.Init() == nvml.SUCCESS
	if hasDriver {
		probe.Shutdown()
	}

	inv := mustNew(t, "auto")
	if inv.Simulated() {
		t.Fatalf("auto returned a simulated backend %q", inv.Backend())
	}
	if want := map[bool]string{true: "nvml", false: "none"}[hasDriver]; inv.Backend() != want {
		t.Fatalf("driver present=%v: backend %q, want %q", hasDriver, inv.Backend(), want)
	}
	switch inv.Backend() {
	case "none":
		st := inv.Status()
		if !strings.Contains(st, "no NVIDIA driver") || !strings.Contains(st, "libnvidia-ml.so.1") {
			t.Errorf("Status() = %q, want it to say no NVIDIA driver and name the library", st)
		}
		devs, err := inv.Devices(testCtx(t))
		if err != nil || len(devs) != 0 {
			t.Errorf("null backend Devices = %v, %v", devs, err)
		}
	case "nvml":
		t.Logf("real NVML present: %s", inv.Status())
		if _, err := inv.Devices(testCtx(t)); err != nil {
			t.Errorf("real NVML Devices: %v", err)
		}
	default:
		t.Fatalf("auto gave backend %q", inv.Backend())
	}
}

func TestNewRejectsUnknownMode(t *testing.T) {
	if _, err := New(Mode{Kind: "mock", Mock: "dgx1"}, WithLogger(quietLogger())); err == nil {
		t.Error("New accepted an unknown mock server")
	}
	if _, err := New(Mode{Kind: "bogus"}, WithLogger(quietLogger())); err == nil {
		t.Error("New accepted an unknown mode kind")
	}
}
