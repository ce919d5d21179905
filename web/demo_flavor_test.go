package web_test

import (
	"context"
	"testing"

	"workbench/web"
)

// make demo (WORKBENCH_GPU_DEMO_LOAD) seeds a one-GPU flavor with a 10 min
// GPU-idle timeout, once; a portal without the demo load gets none.
func TestDemoLoadSeedsAGPUIdleFlavor(t *testing.T) {
	count := func(demo bool, dir string) int {
		t.Helper()
		srv, err := openPortal(dir, func(c *web.Config) { c.GPUDemoLoad = demo })
		if err != nil {
			t.Fatal(err)
		}
		defer srv.Close()
		fls, err := srv.Store.ListFlavors(context.Background(), false)
		if err != nil {
			t.Fatal(err)
		}
		n := 0
		for _, f := range fls {
			if f.GPUIdleTimeoutS > 0 {
				n++
				if f.GPUIdleTimeoutS != int64(web.DemoGPUIdleTimeout.Seconds()) || f.GPUCount != 1 || !f.Enabled || f.GPUModel == "" {
					t.Errorf("demo flavor %+v", f)
				}
			}
		}
		return n
	}
	if n := count(false, t.TempDir()); n != 0 {
		t.Errorf("%d GPU-idle flavors without the demo load, want 0", n)
	}
	dir := t.TempDir()
	if n := count(true, dir); n != 1 {
		t.Errorf("%d GPU-idle flavors with the demo load, want 1", n)
	}
	if n := count(true, dir); n != 1 {
		t.Errorf("%d GPU-idle flavors after a restart, want still 1", n)
	}
}
