package orchestrator

import (
	"context"
	"fmt"
	"io"
	"log/slog"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/NVIDIA/go-nvml/pkg/nvml"
	"github.com/NVIDIA/go-nvml/pkg/nvml/mock/dgxh100"
	"github.com/NVIDIA/go-nvml/pkg/nvml/mock/server"
	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/common/expfmt"
	"github.com/prometheus/common/model"

	"workbench/models"
	"workbench/orchestrator/gpu"
	"workbench/orchestrator/runtime/memruntime"
)

// unitTelRig is a manager over a real store and a DGX H100 mock with life:
// GPU 5 in MIG mode with two 1g.10gb instances handed out through MIG
// device handles, GPU 2 shared in two slices. Processes of "containers"
// are fake PIDs whose /proc/PID/cgroup files the rig writes under a
// temporary procRoot, naming container ids recorded on the workbenches —
// the same cgroup parsing the real-engine attribution test exercises.
type unitTelRig struct {
	m       *Manager
	store   *models.Store
	sampler *gpu.Sampler
	load    *gpu.MockLoad
	mig     *gpu.MockMIGHandles
	srv     *server.Server
	devs    []gpu.Device
	flavor  models.Flavor
	image   int64
	start   time.Time
	now     time.Time
}

func newUnitTelRig(t testing.TB) *unitTelRig {
	t.Helper()
	ctx := context.Background()
	log := slog.New(slog.NewTextHandler(io.Discard, nil))
	s := openStore(t, log)
	if err := s.SeedCatalog(ctx, nil); err != nil {
		t.Fatal(err)
	}
	r := &unitTelRig{store: s, start: time.Date(2026, 3, 2, 12, 0, 0, 0, time.UTC)}
	r.now = r.start
	imgs, _ := s.ListImages(ctx, false)
	fls, _ := s.ListFlavors(ctx, false)
	r.image, r.flavor = imgs[0].ID, fls[0]
	r.flavor.GPUIdleTimeoutS = 3600
	if err := s.UpdateFlavor(ctx, &r.flavor); err != nil {
		t.Fatal(err)
	}

	srv := dgxh100.New()
	r.srv = srv
	r.load = gpu.AttachMockLoad(srv)
	if err := gpu.PartitionMock(srv, []gpu.MockMIGPart{{Index: 5, Profiles: []string{"1g.10gb", "1g.10gb"}}}); err != nil {
		t.Fatal(err)
	}
	r.mig = gpu.NewMockMIGHandles(srv)
	inv, err := gpu.New(gpu.Mode{Kind: gpu.KindMock, Mock: "dgxh100"}, gpu.WithNVML(r.mig, true, "mock:dgxh100"), gpu.WithLogger(log))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { inv.Close() })
	if r.devs, err = inv.Devices(ctx); err != nil {
		t.Fatal(err)
	}
	if len(r.devs[5].MIG) != 2 || strings.Contains(r.devs[5].MIG[0].UUID, "/") {
		t.Fatalf("MIG instances from device handles: %+v", r.devs[5].MIG)
	}
	if _, err := s.SetGPUShared(ctx, r.devs[2].UUID, models.SharedSetting{Slices: 2}, "admin"); err != nil {
		t.Fatal(err)
	}
	r.sampler = gpu.NewSampler(inv, time.Hour, 4, log)
	r.sampler.SetClock(func() time.Time { return r.now })
	r.m = &Manager{store: s, rt: memruntime.New(), pool: NewPool(inv, r.sampler, s), activity: newActivityTracker(), metrics: newPortalMetrics(), log: log}
	r.m.SetClock(func() time.Time { return r.now })
	r.m.WatchUnitIdle()

	old := procRoot
	procRoot = t.TempDir()
	t.Cleanup(func() { procRoot = old })
	return r
}

// holder makes a running workbench of a new user (in group) bound to need,
// whose container runs the fake process pid.
func (r *unitTelRig) holder(t testing.TB, user, group string, need models.GPUNeed, pid int) *models.Workbench {
	t.Helper()
	ctx := context.Background()
	u, err := r.store.CreateUser(ctx, models.NewUser{Username: user, Password: "correct-horse-1"})
	if err != nil {
		t.Fatal(err)
	}
	g, err := r.store.CreateGroup(ctx, group, "")
	if err != nil {
		t.Fatal(err)
	}
	if err := r.store.AddGroupMember(ctx, g.ID, u.ID); err != nil {
		t.Fatal(err)
	}
	wb := &models.Workbench{Name: "w", OwnerID: u.ID, ImageID: r.image, FlavorID: r.flavor.ID}
	if err := r.store.CreateWorkbench(ctx, wb, need, nil); err != nil {
		t.Fatal(err)
	}
	cid := fmt.Sprintf("%064x", pid)
	if err := r.store.SetWorkbenchState(ctx, wb.ID, models.StateRunning, 100, "",
		map[string]any{"container_id": cid, "started_at": r.start}); err != nil {
		t.Fatal(err)
	}
	dir := filepath.Join(procRoot, fmt.Sprint(pid))
	if err := os.MkdirAll(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(dir, "cgroup"), []byte("0::/system.slice/docker-"+cid+".scope\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	got, err := r.store.WorkbenchByID(ctx, wb.ID)
	if err != nil {
		t.Fatal(err)
	}
	return got
}

func (r *unitTelRig) sliceNeed() models.GPUNeed {
	return models.GPUNeed{Kind: models.UnitSlice, Model: r.devs[2].Model, Count: 1, Candidates: []string{r.devs[2].UUID}}
}

func (r *unitTelRig) migNeed(i int) models.GPUNeed {
	mi := r.devs[5].MIG[i]
	return models.GPUNeed{Kind: models.UnitMIG, Model: r.devs[5].Model, Profile: mi.Profile, Count: 1,
		Candidates: []string{mi.UUID}, Parents: map[string]string{mi.UUID: r.devs[5].UUID}}
}

func (r *unitTelRig) at(t *testing.T, d time.Duration) {
	t.Helper()
	r.now = r.start.Add(d)
	if err := r.sampler.Collect(context.Background()); err != nil {
		t.Fatal(err)
	}
}

// scrape serves the manager's collector in the text exposition format and
// parses it back, as Prometheus would read /metrics.
func scrapeExposition(t *testing.T, m *Manager) map[string][]map[string]string {
	t.Helper()
	reg := prometheus.NewRegistry()
	reg.MustRegister(NewCollector(m))
	fams, err := reg.Gather()
	if err != nil {
		t.Fatal(err)
	}
	var buf strings.Builder
	enc := expfmt.NewEncoder(&buf, expfmt.NewFormat(expfmt.TypeTextPlain))
	for _, f := range fams {
		if err := enc.Encode(f); err != nil {
			t.Fatal(err)
		}
	}
	parser := expfmt.NewTextParser(model.UTF8Validation)
	parsed, err := parser.TextToMetricFamilies(strings.NewReader(buf.String()))
	if err != nil {
		t.Fatalf("exposition does not parse: %v", err)
	}
	out := map[string][]map[string]string{}
	for name, f := range parsed {
		for _, mt := range f.GetMetric() {
			l := map[string]string{}
			for _, lp := range mt.GetLabel() {
				l[lp.GetName()] = lp.GetValue()
			}
			v := mt.GetGauge().GetValue() + mt.GetCounter().GetValue()
			l["__value"] = fmt.Sprint(v)
			out[name] = append(out[name], l)
		}
	}
	return out
}

// series picks the series of name whose labels include want.
func series(all map[string][]map[string]string, name string, want map[string]string) []map[string]string {
	var out []map[string]string
	for _, l := range all[name] {
		ok := true
		for k, v := range want {
			ok = ok && l[k] == v
		}
		if ok {
			out = append(out, l)
		}
	}
	return out
}

// TestDCGMSeriesPerMIGInstance: each MIG instance has its own series with
// dcgm-exporter's GPU_I_PROFILE and GPU_I_ID, the instance's own memory
// and the holder of THAT instance (the other instance, free, has none);
// utilisation the driver does not answer per instance is absent, not 0.
func TestDCGMSeriesPerMIGInstance(t *testing.T) {
	r := newUnitTelRig(t)
	wb := r.holder(t, "alice", "vision", r.migNeed(0), 4100)
	held, free := r.devs[5].MIG[0], r.devs[5].MIG[1]
	r.mig.SetMemUsed(held.UUID, 6144)
	r.mig.SetMemUsed(free.UUID, 0)
	r.at(t, time.Minute)

	all := scrapeExposition(t, r.m)
	gpu5 := map[string]string{"gpu": "5", "UUID": r.devs[5].UUID, "modelName": r.devs[5].Model}
	with := func(extra map[string]string) map[string]string {
		out := map[string]string{}
		for k, v := range gpu5 {
			out[k] = v
		}
		for k, v := range extra {
			out[k] = v
		}
		return out
	}
	got := series(all, "DCGM_FI_DEV_FB_USED", with(map[string]string{"GPU_I_PROFILE": "1g.10gb", "GPU_I_ID": fmt.Sprint(held.GPUInstanceID)}))
	if len(got) != 1 {
		t.Fatalf("FB_USED of the held instance: %v (all: %v)", got, all["DCGM_FI_DEV_FB_USED"])
	}
	if l := got[0]; l["workbench"] != wb.ID || l["user"] != "alice" || l["group"] != "vision" || l["__value"] != "6144" || l["Hostname"] == "" {
		t.Errorf("held instance series %v, want alice's workbench %s and 6144 MiB", l, wb.ID)
	}
	got = series(all, "DCGM_FI_DEV_FB_FREE", with(map[string]string{"GPU_I_ID": fmt.Sprint(held.GPUInstanceID)}))
	if len(got) != 1 || got[0]["__value"] != fmt.Sprint(10240-6144) {
		t.Errorf("FB_FREE of the held instance: %v", got)
	}
	got = series(all, "DCGM_FI_DEV_FB_USED", with(map[string]string{"GPU_I_ID": fmt.Sprint(free.GPUInstanceID)}))
	if len(got) != 1 || got[0]["workbench"] != "" || got[0]["user"] != "" || got[0]["__value"] != "0" {
		t.Errorf("free instance series %v: want a readable 0 and no holder", got)
	}
	for _, l := range all["DCGM_FI_DEV_GPU_UTIL"] {
		if l["gpu"] == "5" {
			t.Errorf("utilisation that cannot be read per instance (or on a MIG GPU) exported: %v", l)
		}
	}
	// The parent GPU's own series (power etc.) stays, without a holder:
	// the GPU is nobody's as a whole.
	got = series(all, "DCGM_FI_DEV_POWER_USAGE", with(map[string]string{"GPU_I_ID": ""}))
	if len(got) != 1 || got[0]["workbench"] != "" {
		t.Errorf("parent GPU power series: %v", got)
	}
	if n := len(series(all, "DCGM_FI_DEV_POWER_USAGE", with(map[string]string{"GPU_I_ID": fmt.Sprint(held.GPUInstanceID)}))); n != 0 {
		t.Errorf("a whole-GPU figure (power) exported per instance: %d series", n)
	}
	// The pool (API "units", /gpus) carries the instance's own reading:
	// memory, and utilisation absent rather than 0.
	pool, err := r.m.pool.List(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	for _, u := range pool[5].Units {
		if u.UUID != held.UUID {
			continue
		}
		if rd := u.Reading; rd == nil || rd.MemUsedMiB == nil || *rd.MemUsedMiB != 6144 || rd.UtilPercent != nil {
			t.Errorf("pool reading of the held instance: %+v", rd)
		}
	}
	// GPU-idle release never fires on an instance whose utilisation
	// cannot be read.
	r.at(t, 3*time.Hour)
	if g := r.m.GPUIdle(context.Background(), wb); !g.Since.IsZero() {
		t.Errorf("MIG holder with unreadable utilisation counted idle: %+v", g)
	}
}

// TestSliceHoldersGetTheirOwnProcessFigures: on a shared GPU each slice
// holder's series carry the memory and SM utilisation of its own
// processes (fake PIDs traced through their cgroup files to the holders'
// containers), and GPU-idle release of a holder follows its own processes,
// not the whole GPU: the idle holder is released while its neighbour keeps
// the GPU busy.
func TestSliceHoldersGetTheirOwnProcessFigures(t *testing.T) {
	r := newUnitTelRig(t)
	busy := r.holder(t, "alice", "vision", r.sliceNeed(), 4201)
	idle := r.holder(t, "bob", "audio", r.sliceNeed(), 4202)
	r.load.Set(2, gpu.MockGPULoad{UtilPercent: 85, PowerMilliW: 500000, Processes: []gpu.Process{
		{PID: 4201, UsedMemMiB: 30000, SMUtilPercent: 85},
		{PID: 4202, UsedMemMiB: 2000, SMUtilPercent: 1},
		{PID: 9999, UsedMemMiB: 10}, // in no container of ours
	}})
	r.at(t, time.Minute)

	all := scrapeExposition(t, r.m)
	gpu2 := map[string]string{"gpu": "2", "UUID": r.devs[2].UUID}
	pick := func(name, wbID string) []map[string]string {
		w := map[string]string{"workbench": wbID}
		for k, v := range gpu2 {
			w[k] = v
		}
		return series(all, name, w)
	}
	for _, c := range []struct {
		wb        *models.Workbench
		user      string
		mem, util string
	}{{busy, "alice", "30000", "85"}, {idle, "bob", "2000", "1"}} {
		mem, util := pick("DCGM_FI_DEV_FB_USED", c.wb.ID), pick("DCGM_FI_DEV_GPU_UTIL", c.wb.ID)
		if len(mem) != 1 || mem[0]["__value"] != c.mem || mem[0]["user"] != c.user {
			t.Errorf("%s FB_USED %v, want %s MiB of its own processes", c.user, mem, c.mem)
		}
		if len(util) != 1 || util[0]["__value"] != c.util {
			t.Errorf("%s GPU_UTIL %v, want %s%% of its own processes", c.user, util, c.util)
		}
		for _, name := range []string{"DCGM_FI_DEV_POWER_USAGE", "DCGM_FI_DEV_FB_FREE", "DCGM_FI_DEV_GPU_TEMP"} {
			if got := pick(name, c.wb.ID); len(got) != 0 {
				t.Errorf("whole-GPU figure %s exported for slice holder %s: %v", name, c.user, got)
			}
		}
	}
	whole := pick("DCGM_FI_DEV_GPU_UTIL", "")
	if len(whole) != 1 || whole[0]["__value"] != "85" || whole[0]["user"] != "" {
		t.Errorf("shared GPU's own utilisation series: %v", whole)
	}

	// GPU-idle: bob's processes stay at 1% while alice's keep the GPU at
	// 85%. Bob is warned, then released; alice never.
	r.at(t, 20*time.Minute)
	r.at(t, 42*time.Minute)
	ctx := context.Background()
	if g := r.m.GPUIdle(ctx, idle); !g.Warn || !g.Since.Equal(r.start.Add(time.Minute)) {
		t.Errorf("idle slice holder after 42 min: %+v, want a warning, idle since 12:01", g)
	}
	if g := r.m.GPUIdle(ctx, busy); !g.Since.IsZero() {
		t.Errorf("busy slice holder counted idle: %+v", g)
	}
	r.at(t, 61*time.Minute)
	if reason, kind := r.m.cullReason(ctx, idle, r.now); kind != CullGPUIdle || !strings.Contains(reason, "GPU idle") {
		t.Errorf("idle slice holder not released: %q %q", reason, kind)
	}
	if reason, _ := r.m.cullReason(ctx, busy, r.now); reason != "" {
		t.Errorf("busy slice holder released: %q", reason)
	}

	// A failed collection ends the run: the previous (stale) reading is
	// not a new idle sample.
	count := r.srv.DeviceGetCountFunc
	r.srv.DeviceGetCountFunc = func() (int, nvml.Return) { return 0, nvml.ERROR_UNKNOWN }
	r.now = r.start.Add(61*time.Minute + 30*time.Second)
	if err := r.sampler.Collect(ctx); err == nil {
		t.Fatal("collection with a failing driver succeeded")
	}
	r.srv.DeviceGetCountFunc = count
	if g := r.m.GPUIdle(ctx, idle); !g.Since.IsZero() {
		t.Errorf("slice holder still idle after a failed collection: %+v", g)
	}

	// Per-process utilisation that cannot be read ends the idle run.
	r.load.Set(2, gpu.MockGPULoad{Fail: true})
	r.at(t, 62*time.Minute)
	if g := r.m.GPUIdle(ctx, idle); !g.Since.IsZero() {
		t.Errorf("slice holder idle on an unreadable GPU: %+v", g)
	}
	if got := series(scrapeExposition(t, r.m), "DCGM_FI_DEV_GPU_UTIL", map[string]string{"workbench": idle.ID}); len(got) != 0 {
		t.Errorf("unreadable per-process utilisation exported: %v", got)
	}
}
