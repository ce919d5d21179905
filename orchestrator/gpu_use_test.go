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
	"github.com/prometheus/client_golang/prometheus"
	dto "github.com/prometheus/client_model/go"

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
	broken := 7
	if broken == held || broken == stranger {
		broken = 6
	}
	load.Set(broken, gpu.MockGPULoad{Fail: true})
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
	assertDCGMSeries(t, rig.m, pool, held, stranger, broken, want)
	if err := rig.m.Stop(ctx, wb.ID, ""); err != nil {
		t.Fatal(err)
	}
}

// assertDCGMSeries gathers the manager's collector and checks the
// dcgm-named series: holder labels on the held GPU, empty ones on a free
// GPU, and no utilisation series at all (not a 0) for the GPU that could
// not be read.
func assertDCGMSeries(t *testing.T, m *Manager, pool []PoolGPU, held, free, broken int, want Holder) {
	t.Helper()
	reg := prometheus.NewRegistry()
	reg.MustRegister(NewCollector(m))
	fams, err := reg.Gather()
	if err != nil {
		t.Fatal(err)
	}
	byName := map[string]*dto.MetricFamily{}
	for _, f := range fams {
		byName[f.GetName()] = f
	}
	util := byName["DCGM_FI_DEV_GPU_UTIL"]
	if util == nil {
		t.Fatalf("no DCGM_FI_DEV_GPU_UTIL; families: %d", len(fams))
	}
	series := map[string]*dto.Metric{}
	for _, mt := range util.GetMetric() {
		l := map[string]string{}
		for _, lp := range mt.GetLabel() {
			l[lp.GetName()] = lp.GetValue()
		}
		for _, k := range []string{"gpu", "UUID", "modelName", "Hostname", "workbench", "user", "group"} {
			if _, ok := l[k]; !ok && k != "workbench" && k != "user" && k != "group" {
				t.Errorf("series %v lacks label %s", l, k)
			}
		}
		series[l["gpu"]] = mt
		if l["gpu"] == strconv.Itoa(held) {
			if l["workbench"] != want.WorkbenchID || l["user"] != want.User || l["group"] != want.Group || l["UUID"] != pool[held].UUID {
				t.Errorf("held GPU labels %v, want holder %+v", l, want)
			}
			if mt.GetGauge().GetValue() != 91 {
				t.Errorf("held GPU utilisation %v, want 91", mt.GetGauge().GetValue())
			}
		}
		if l["gpu"] == strconv.Itoa(free) && (l["workbench"] != "" || l["user"] != "") {
			t.Errorf("free GPU labelled with a holder: %v", l)
		}
	}
	if _, ok := series[strconv.Itoa(broken)]; ok {
		t.Errorf("unreadable GPU %d exported a utilisation value", broken)
	}
	if _, ok := series[strconv.Itoa(free)]; !ok {
		t.Errorf("free GPU %d (readable 0%%) has no utilisation series", free)
	}
	for _, name := range []string{"DCGM_FI_DEV_MEM_COPY_UTIL", "DCGM_FI_DEV_FB_USED", "DCGM_FI_DEV_FB_FREE", "DCGM_FI_DEV_POWER_USAGE",
		"DCGM_FI_DEV_TOTAL_ENERGY_CONSUMPTION", "DCGM_FI_DEV_GPU_TEMP", "workbench_spawn_duration_seconds", "workbench_culls_total"} {
		if byName[name] == nil {
			t.Errorf("no %s series", name)
		}
	}
	// The launch above was observed by the spawn histogram.
	for _, mt := range byName["workbench_spawn_duration_seconds"].GetMetric() {
		for _, lp := range mt.GetLabel() {
			if lp.GetValue() == "success" && mt.GetHistogram().GetSampleCount() < 1 {
				t.Error("the launch was not counted in workbench_spawn_duration_seconds")
			}
		}
	}
}
