package runtime

import (
	"context"
	"slices"
	"testing"
	"time"
)

// TestMIGDeviceRequestOnEngine: a container created for a MIG instance
// carries, in the engine's own record (ContainerInspect
// HostConfig.DeviceRequests), one nvidia request naming exactly that MIG
// UUID — not its GPU, not "all". The container is created, never started:
// the engine accepts the request without a GPU and only needs the NVIDIA
// toolkit at start, so this runs on any engine.
func TestMIGDeviceRequestOnEngine(t *testing.T) {
	t.Parallel()
	e := newEngineEnv(t)
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	const mig = "MIG-3b5a2b1e-6c1f-5d27-9a0e-3f2b8c7d6e5f"
	s := e.spec("mig", e.network(t, ctx, "mig"), "")
	s.GPUs = GPURequest{UUIDs: []string{mig}}
	id, err := e.d.Create(ctx, s)
	if err != nil {
		t.Fatal(err)
	}
	got, err := e.d.cli.ContainerInspect(ctx, id)
	if err != nil {
		t.Fatal(err)
	}
	reqs := got.HostConfig.DeviceRequests
	if len(reqs) != 1 || reqs[0].Driver != "nvidia" || !slices.Equal(reqs[0].DeviceIDs, []string{mig}) || reqs[0].Count != 0 {
		t.Fatalf("device requests %+v, want one nvidia request for exactly %s", reqs, mig)
	}
	if !slices.Contains(got.Config.Env, EnvNVIDIAVisible+"="+mig) {
		t.Errorf("env %v lacks %s=%s", got.Config.Env, EnvNVIDIAVisible, mig)
	}
	info, err := e.d.Inspect(ctx, id)
	if err != nil {
		t.Fatal(err)
	}
	if back := info.GPUs(); back.Simulated || !slices.Equal(back.UUIDs, []string{mig}) {
		t.Errorf("GPUs() read back %+v", back)
	}
}
