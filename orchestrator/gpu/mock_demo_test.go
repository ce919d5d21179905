package gpu

import (
	"context"
	"testing"
	"time"
)

// The demo load keeps the mock's stable UUIDs, makes odd GPUs busy and
// even ones idle, and its energy counter only grows.
func TestLiveMockDemoLoad(t *testing.T) {
	lib, load, err := NewLiveMock("dgxh100")
	if err != nil {
		t.Fatal(err)
	}
	inv := mustNew(t, "mock:dgxh100", WithNVML(lib, true, "mock:dgxh100"))
	plain := mustNew(t, "mock:dgxh100")
	a, _ := inv.Devices(testCtx(t))
	b, _ := plain.Devices(testCtx(t))
	if len(a) != 8 || a[3].UUID != b[3].UUID {
		t.Fatalf("live mock UUIDs differ from mode mock:dgxh100's")
	}
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan struct{})
	go func() { load.RunDemo(ctx, 5*time.Millisecond); close(done) }()
	defer func() { cancel(); <-done }()
	var first []Sample
	deadline := time.Now().Add(10 * time.Second)
	for {
		s, err := inv.Sample(testCtx(t))
		if err != nil {
			t.Fatal(err)
		}
		if first == nil && s[1].UtilPercent > 0 {
			first = s
		}
		if first != nil && s[1].EnergyMilliJ > first[1].EnergyMilliJ {
			for i, g := range s {
				if i%2 == 1 && (g.UtilPercent < 39 || g.UtilPercent > 95) {
					t.Errorf("busy GPU %d at %d%%", i, g.UtilPercent)
				}
				if i%2 == 0 && g.UtilPercent > 3 {
					t.Errorf("idle GPU %d at %d%%", i, g.UtilPercent)
				}
				if g.PowerMilliW < 70000 {
					t.Errorf("GPU %d draws %d mW", i, g.PowerMilliW)
				}
			}
			return
		}
		if time.Now().After(deadline) {
			t.Fatal("the demo load did not advance the energy counter")
		}
		time.Sleep(5 * time.Millisecond)
	}
}
