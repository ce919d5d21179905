package orchestrator

import (
	"context"
	"io"
	"log/slog"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/NVIDIA/go-nvml/pkg/nvml/mock/dgxh100"

	"workbench/orchestrator/gpu"
)

const testCID = "0b29eeef0a4df93e04f79bfc5d87684d20e769bd7dd55e9ff8e362fa8dbb03b5"

func TestContainerIDFromCgroup(t *testing.T) {
	cases := map[string]string{
		"cgroup v1":             "12:pids:/docker/" + testCID + "\n4:memory:/docker/" + testCID + "\n",
		"cgroup v2 cgroupfs":    "0::/docker/" + testCID + "\n",
		"cgroup v2 systemd":     "0::/system.slice/docker-" + testCID + ".scope\n",
		"containerd":            "0::/kubepods.slice/cri-containerd-" + testCID + ".scope\n",
		"docker in docker":      "0::/docker/" + strings.Repeat("a", 64) + "/docker/" + testCID + "\n",
		"host process":          "0::/user.slice/user-1000.slice/session-3.scope\n",
		"too short to be an id": "0::/docker/0b29eeef0a4d\n",
	}
	for name, content := range cases {
		want := testCID
		if name == "host process" || name == "too short to be an id" {
			want = ""
		}
		if got := ContainerIDFromCgroup(content); got != want {
			t.Errorf("%s: got %q, want %q", name, got, want)
		}
	}
}

// A mock GPU reports the PID of a real workbench container (taken from
// the engine), and attribution must trace it through /proc/PID/cgroup to
// that workbench; the whole GPU's holder is the same workbench.
func TestGPUUseAttributesARealContainersProcess(t *testing.T) {
	srv := dgxh100.New()
	load := gpu.AttachMockLoad(srv)
	inv, err := gpu.New(gpu.Mode{Kind: gpu.KindMock, Mock: "dgxh100"},
		gpu.WithNVML(srv, true, "mock:dgxh100"), gpu.WithLogger(slog.New(slog.NewTextHandler(io.Discard, nil))))
	if err != nil {
		t.Fatal(err)
	}
	sampler := gpu.NewSampler(inv, time.Hour, 10, nil)
	rig := newLifecycleRigWithGPUs(t, nil, inv, sampler)
	ctx := context.Background()
	g, err := rig.store.CreateGroup(ctx, "vision", "")
	if err != nil {
		t.Fatal(err)
	}
	if err := rig.store.AddGroupMember(ctx, g.ID, rig.owner.ID); err != nil {
		t.Fatal(err)
	}
	wb := rig.launchRunning(t, "attributed")
	ins, err := rig.cli.ContainerInspect(ctx, wb.ContainerID)
	if err != nil {
		t.Fatal(err)
	}
	pid := ins.State.Pid
	if pid <= 0 {
		t.Fatalf("engine gave no PID: %+v", ins.State)
	}
	if _, err := os.ReadFile(filepath.Join(procRoot, strconv.Itoa(pid), "cgroup")); err != nil {
		t.Skipf("the engine's PIDs are not visible here (separate PID namespace): %v", err)
	}
	pool, err := rig.m.pool.List(ctx)
	if err != nil {
		t.Fatal(err)
	}
	held, stranger := -1, -1
	for _, p := range pool {
		if p.WorkbenchID == wb.ID {
			held = p.Index
		} else if stranger < 0 {
			stranger = p.Index
		}
	}
	if held < 0 || stranger < 0 {
		t.Fatalf("pool: workbench on GPU %d, a free one %d", held, stranger)
	}
	load.Set(held, gpu.MockGPULoad{UtilPercent: 91, Processes: []gpu.Process{{PID: uint32(pid), UsedMemMiB: 2048}}})
	// The portal's own process on another GPU: in no container of ours.
	load.Set(stranger, gpu.MockGPULoad{Processes: []gpu.Process{{PID: uint32(os.Getpid())}}})
	if err := sampler.Collect(ctx); err != nil {
		t.Fatal(err)
	}
	uses, err := rig.m.GPUUse(ctx)
	if err != nil {
		t.Fatal(err)
	}
	want := Holder{WorkbenchID: wb.ID, User: "alice", Group: "vision"}
	for _, u := range uses {
		switch u.Index {
		case held:
			if u.Holder != want {
				t.Errorf("holder of GPU %d = %+v, want %+v", held, u.Holder, want)
			}
			if len(u.Processes) != 1 {
				t.Fatalf("processes on GPU %d: %+v", held, u.Processes)
			}
			p := u.Processes[0]
			if !strings.HasPrefix(ins.ID, p.ContainerID) || p.ContainerID == "" || p.Holder != want || p.UsedMemMiB != 2048 {
				t.Errorf("process %d traced to container %q holder %+v, want %s and %+v", p.PID, p.ContainerID, p.Holder, ins.ID, want)
			}
			if !u.HasSample || u.Sample.UtilPercent != 91 {
				t.Errorf("GPU %d sample %+v", held, u.Sample)
			}
		case stranger:
			if u.Holder != (Holder{}) {
				t.Errorf("free GPU %d has holder %+v", stranger, u.Holder)
			}
			if len(u.Processes) != 1 || u.Processes[0].Holder != (Holder{}) {
				t.Errorf("the test's own process was attributed: %+v", u.Processes)
			}
		}
	}
	if err := rig.m.Stop(ctx, wb.ID, ""); err != nil {
		t.Fatal(err)
	}
}
