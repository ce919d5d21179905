package orchestrator

import (
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net"
	"net/http"
	"net/http/httptest"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/NVIDIA/go-nvml/pkg/nvml"
	"github.com/NVIDIA/go-nvml/pkg/nvml/mock/dgxh100"

	"workbench/models"
	"workbench/models/pricing"
	"workbench/orchestrator/gpu"
	"workbench/orchestrator/runtime"
	"workbench/orchestrator/runtime/memruntime"
)

// unitRig is a manager on memruntime over a go-nvml DGX H100 mock reported
// as real GPUs (so containers get real device requests): GPU 2 has MIG on
// with two 1g.10gb instances and one 3g.40gb, GPU 3 is shared in 2 slices.
type unitRig struct {
	m      *Manager
	rt     *memruntime.Runtime
	store  *models.Store
	owner  *models.User
	gpus   []gpu.Device
	migs   []gpu.MIGInstance // GPU 2's 1g.10gb instances
	shared string            // GPU 3's UUID
}

// partitionMIG makes a GPU instance and a compute instance of the given
// profiles through the mock's NVML API — what `nvidia-smi mig -cgi … -C`
// does on a real host, outside the portal.
func partitionMIG(t *testing.T, dev nvml.Device, giProfile, ciProfile int) {
	t.Helper()
	giInfo, ret := dev.GetGpuInstanceProfileInfo(giProfile)
	if ret != nvml.SUCCESS {
		t.Fatalf("GI profile %d: %v", giProfile, ret)
	}
	gi, ret := dev.CreateGpuInstance(&giInfo)
	if ret != nvml.SUCCESS {
		t.Fatalf("create GI: %v", ret)
	}
	ciInfo, ret := gi.GetComputeInstanceProfileInfo(ciProfile, nvml.COMPUTE_INSTANCE_ENGINE_PROFILE_SHARED)
	if ret != nvml.SUCCESS {
		t.Fatalf("CI profile %d: %v", ciProfile, ret)
	}
	if _, ret := gi.CreateComputeInstance(&ciInfo); ret != nvml.SUCCESS {
		t.Fatalf("create CI: %v", ret)
	}
}

func newUnitRig(t *testing.T) *unitRig {
	t.Helper()
	ctx := context.Background()
	log := slog.New(slog.NewTextHandler(io.Discard, nil))
	store := openStore(t, log)
	srv := dgxh100.New()
	dev, ret := srv.DeviceGetHandleByIndex(2)
	if ret != nvml.SUCCESS {
		t.Fatal(ret)
	}
	if r, _ := dev.SetMigMode(nvml.DEVICE_MIG_ENABLE); r != nvml.SUCCESS {
		t.Fatal(r)
	}
	partitionMIG(t, dev, nvml.GPU_INSTANCE_PROFILE_1_SLICE, nvml.COMPUTE_INSTANCE_PROFILE_1_SLICE)
	partitionMIG(t, dev, nvml.GPU_INSTANCE_PROFILE_1_SLICE, nvml.COMPUTE_INSTANCE_PROFILE_1_SLICE)
	partitionMIG(t, dev, nvml.GPU_INSTANCE_PROFILE_3_SLICE, nvml.COMPUTE_INSTANCE_PROFILE_3_SLICE)
	// Reported as real NVML: the launch then asks the engine for NVIDIA
	// support and passes real device requests.
	inv, err := gpu.New(gpu.Mode{Kind: gpu.KindMock, Mock: "dgxh100"}, gpu.WithNVML(srv, false, "nvml"))
	if err != nil {
		t.Fatal(err)
	}
	devs, err := inv.Devices(ctx)
	if err != nil {
		t.Fatal(err)
	}
	r := &unitRig{store: store, gpus: devs, shared: devs[3].UUID}
	for _, mi := range devs[2].MIG {
		if mi.Profile == "1g.10gb" {
			r.migs = append(r.migs, mi)
		}
	}
	if len(r.migs) != 2 {
		t.Fatalf("mock GPU 2 MIG instances: %+v", devs[2].MIG)
	}
	if err := store.SeedDefaultPrices(ctx, []string{devs[0].Model}); err != nil {
		t.Fatal(err)
	}
	img := &models.Image{Name: "mem", Image: "mem:latest", StartCommand: "jupyter lab --port={port} --ServerApp.base_url={base_url} --IdentityProvider.token={token}",
		RunAsUser: "1000", HomePath: "/home/jovyan", Enabled: true}
	if err := store.CreateImage(ctx, img); err != nil {
		t.Fatal(err)
	}
	if r.owner, err = store.CreateUser(ctx, models.NewUser{Username: "alice", Password: "alice-password", Role: "user"}); err != nil {
		t.Fatal(err)
	}
	for _, fl := range []models.Flavor{
		{Name: "mig-1g", GPUModel: devs[0].Model, GPUCount: 1, UnitKind: models.UnitMIG, MIGProfile: "1g.10gb", CPUMilli: 1000, MemoryMiB: 1024, Enabled: true},
		{Name: "slice", GPUModel: devs[0].Model, GPUCount: 1, UnitKind: models.UnitSlice, CPUMilli: 1000, MemoryMiB: 1024, Enabled: true},
		{Name: "whole", GPUModel: devs[0].Model, GPUCount: 1, CPUMilli: 1000, MemoryMiB: 1024, Enabled: true},
	} {
		if err := store.CreateFlavor(ctx, &fl); err != nil {
			t.Fatal(err)
		}
	}
	r.rt = memruntime.New()
	r.rt.SetNVIDIA(true)
	jupyter := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, req *http.Request) {
		_, _ = w.Write([]byte(`{"last_activity":"2026-01-01T00:00:00Z"}`))
	}))
	t.Cleanup(jupyter.Close)
	host, portText, _ := net.SplitHostPort(strings.TrimPrefix(jupyter.URL, "http://"))
	port, _ := strconv.Atoi(portText)
	r.rt.SetEndpoint(func(info runtime.ContainerInfo, _ string) (string, int) {
		if !info.Running {
			return "", 0
		}
		return host, port
	})
	r.m = NewManager(store, NewPool(inv, nil, store), r.rt, "unittest", Options{}, log)
	t.Cleanup(r.m.Wait)
	if err := r.m.pool.SetShared(ctx, r.shared, models.SharedSetting{Slices: 2, MPSMemoryMiB: 20480, MPSThreadPercent: 50}, "admin"); err != nil {
		t.Fatal(err)
	}
	return r
}

// launchRunning launches name on flavor and waits until it runs.
func (r *unitRig) launchRunning(t *testing.T, name, flavor string) *models.Workbench {
	t.Helper()
	wb, err := r.m.Launch(context.Background(), r.owner, LaunchRequest{Name: name, Image: "mem", Flavor: flavor})
	if err != nil {
		t.Fatalf("launch %s on %s: %v", name, flavor, err)
	}
	mr := &memRig{m: r.m, rt: r.rt, store: r.store}
	got := mr.waitState(t, wb.ID, models.StateRunning, models.StateFailed)
	if got.State != models.StateRunning {
		t.Fatalf("%s ended %s: %s", name, got.State, got.Reason)
	}
	return got
}

// deviceRequest is the GPU request the workbench's container was created with.
func (r *unitRig) deviceRequest(t *testing.T, id string) runtime.GPURequest {
	t.Helper()
	g, ok := r.rt.GPURequest(r.m.containerName(id))
	if !ok {
		t.Fatalf("no container for %s", id)
	}
	return g
}

func refusedCode(err error) string {
	var re *RefusedError
	if errors.As(err, &re) {
		return re.Code
	}
	return fmt.Sprint(err)
}

// TestMIGLaunchGetsExactlyItsInstance: on a MIG-capable mock, a MIG
// flavor's workbench is bound to one MIG instance by its UUID and its
// container's device request names exactly that UUID (not the GPU); two
// workbenches share the GPU on distinct instances; a third is refused;
// the pool lists the instances with their holders.
func TestMIGLaunchGetsExactlyItsInstance(t *testing.T) {
	t.Parallel()
	r := newUnitRig(t)
	ctx := context.Background()
	a := r.launchRunning(t, "a", "mig-1g")
	b := r.launchRunning(t, "b", "mig-1g")
	parent := r.gpus[2].UUID
	var got []string
	for _, wb := range []*models.Workbench{a, b} {
		if len(wb.Units) != 1 || wb.Units[0].Kind != models.UnitMIG || wb.Units[0].Profile != "1g.10gb" ||
			!slices.Equal(wb.GPUs, []string{parent}) || wb.Shared {
			t.Fatalf("%s: units %+v gpus %v shared %v", wb.Name, wb.Units, wb.GPUs, wb.Shared)
		}
		req := r.deviceRequest(t, wb.ID)
		if req.Simulated || !slices.Equal(req.UUIDs, []string{wb.Units[0].UUID}) {
			t.Fatalf("%s: device request %+v, want exactly its MIG UUID %s", wb.Name, req, wb.Units[0].UUID)
		}
		got = append(got, wb.Units[0].UUID)
	}
	slices.Sort(got)
	want := []string{r.migs[0].UUID, r.migs[1].UUID}
	slices.Sort(want)
	if !slices.Equal(got, want) {
		t.Fatalf("bound instances %v, want both 1g.10gb instances %v", got, want)
	}
	_, err := r.m.Launch(ctx, r.owner, LaunchRequest{Name: "c", Image: "mem", Flavor: "mig-1g"})
	if refusedCode(err) != "no_capacity" || !strings.Contains(err.Error(), "MIG instances") {
		t.Fatalf("third 1g.10gb launch: %v, want no_capacity about MIG instances", err)
	}
	// A whole-GPU flavor never lands on the MIG GPU nor the shared one.
	w := r.launchRunning(t, "w", "whole")
	if w.GPUs[0] == parent || w.GPUs[0] == r.shared {
		t.Fatalf("whole GPU bound to a MIG or shared GPU: %v", w.GPUs)
	}
	pool, err := r.m.pool.List(ctx)
	if err != nil {
		t.Fatal(err)
	}
	g := pool[2]
	if g.State != GPUMIG || len(g.Units) != 3 || g.FreeUnits() != 1 {
		t.Fatalf("pool GPU 2: state %s units %+v", g.State, g.Units)
	}
	holders := map[string]string{}
	for _, u := range g.Units {
		holders[u.UUID] = u.WorkbenchID
	}
	if holders[a.Units[0].UUID] != a.ID || holders[b.Units[0].UUID] != b.ID {
		t.Fatalf("pool holders %v, want a=%s b=%s", holders, a.ID, b.ID)
	}
	// Stopping frees the instance for the next launch.
	if err := r.m.Stop(ctx, a.ID, ""); err != nil {
		t.Fatal(err)
	}
	(&memRig{m: r.m, rt: r.rt, store: r.store}).waitState(t, a.ID, models.StateStopped)
	c := r.launchRunning(t, "c", "mig-1g")
	if c.Units[0].UUID != a.Units[0].UUID {
		t.Fatalf("after the stop, c got %s, want the freed %s", c.Units[0].UUID, a.Units[0].UUID)
	}
	// Starting a again binds afresh in the same transaction: both 1g.10gb
	// are held now, so it is refused; once c stops, it gets that instance
	// and a container whose device request names it.
	if err := r.m.Start(ctx, a.ID, r.owner); refusedCode(err) != "no_capacity" {
		t.Fatalf("start with every instance held: %v", err)
	}
	if err := r.m.Stop(ctx, c.ID, ""); err != nil {
		t.Fatal(err)
	}
	(&memRig{m: r.m, rt: r.rt, store: r.store}).waitState(t, c.ID, models.StateStopped)
	if err := r.m.Start(ctx, a.ID, r.owner); err != nil {
		t.Fatal(err)
	}
	again := (&memRig{m: r.m, rt: r.rt, store: r.store}).waitState(t, a.ID, models.StateRunning, models.StateFailed)
	if again.State != models.StateRunning || len(again.Units) != 1 || again.Units[0].Kind != models.UnitMIG {
		t.Fatalf("restarted a: %s %q units %+v", again.State, again.Reason, again.Units)
	}
	if req := r.deviceRequest(t, a.ID); !slices.Equal(req.UUIDs, []string{again.Units[0].UUID}) {
		t.Fatalf("restarted a's device request %+v, want %s", req, again.Units[0].UUID)
	}
}

// TestSharedSliceLaunches: a GPU shared in 2 slices runs 2 workbenches on
// the same GPU, each labelled shared, each container given the whole GPU
// and the MPS limits the admin set; the 3rd is refused without queue (with
// queue it waits: TestSliceQueueWaitsThenStarts).
func TestSharedSliceLaunches(t *testing.T) {
	t.Parallel()
	r := newUnitRig(t)
	ctx := context.Background()
	for i := 0; i < 2; i++ {
		wb := r.launchRunning(t, fmt.Sprintf("s%d", i), "slice")
		if !wb.Shared || len(wb.Units) != 1 || wb.Units[0].Kind != models.UnitSlice || !slices.Equal(wb.GPUs, []string{r.shared}) {
			t.Fatalf("slice %d: shared %v units %+v gpus %v", i, wb.Shared, wb.Units, wb.GPUs)
		}
		req := r.deviceRequest(t, wb.ID)
		if req.Simulated || !slices.Equal(req.UUIDs, []string{r.shared}) {
			t.Fatalf("slice %d device request %+v, want the shared GPU %s", i, req, r.shared)
		}
		c, _ := r.rt.Container(r.m.containerName(wb.ID))
		for _, kv := range []string{EnvWorkbenchShared + "=1", EnvMPSMemLimit + "=0=20480M", EnvMPSThreadPct + "=50"} {
			if !slices.Contains(c.Env, kv) {
				t.Errorf("slice %d env lacks %s: %v", i, kv, c.Env)
			}
		}
	}
	_, err := r.m.Launch(ctx, r.owner, LaunchRequest{Name: "s2", Image: "mem", Flavor: "slice"})
	if refusedCode(err) != "no_capacity" {
		t.Fatalf("the 3rd workbench on 2 slices: %v, want no_capacity", err)
	}
	pool, err := r.m.pool.List(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if g := pool[3]; g.State != GPUShared || g.SharedSlices != 2 || len(g.Units) != 2 || g.FreeUnits() != 0 {
		t.Fatalf("pool GPU 3: %+v", g)
	}
	// A MIG GPU cannot be shared.
	if err := r.m.pool.SetShared(ctx, r.gpus[2].UUID, models.SharedSetting{Slices: 2}, "admin"); err == nil {
		t.Fatal("a MIG-enabled GPU was shared")
	}
}

// TestUnitBillingAtKindRate: a MIG run is metered as a MIG instance and
// billed at its profile's rate, a slice at the slice rate, by the same
// PriceRun the calculator calls.
func TestUnitBillingAtKindRate(t *testing.T) {
	t.Parallel()
	r := newUnitRig(t)
	ctx := context.Background()
	// Admin rates, in force from now on (not the seeded defaults).
	for _, pr := range []models.PriceRate{
		{Resource: pricing.MIG, GPUModel: "1g.10gb", Micros: 700_000, CreatedBy: "admin"},
		{Resource: pricing.Slice, GPUModel: r.gpus[0].Model, Micros: 900_000, CreatedBy: "admin"},
	} {
		if err := r.store.AddPriceRate(ctx, &pr); err != nil {
			t.Fatal(err)
		}
	}
	m := r.launchRunning(t, "m", "mig-1g")
	s := r.launchRunning(t, "s", "slice")
	for _, tc := range []struct {
		wb       *models.Workbench
		resource string
		key      string
		rate     int64
	}{{m, pricing.MIG, "1g.10gb", 700_000}, {s, pricing.Slice, r.gpus[0].Model, 900_000}} {
		iv, err := r.store.OpenIntervalOf(ctx, tc.wb.ID)
		if err != nil {
			t.Fatal(err)
		}
		if iv.UnitKind != tc.resource || iv.GPUCount != 1 {
			t.Fatalf("%s metered as %q × %d", tc.wb.Name, iv.UnitKind, iv.GPUCount)
		}
		if err := r.m.Stop(ctx, tc.wb.ID, ""); err != nil {
			t.Fatal(err)
		}
		(&memRig{m: r.m, rt: r.rt, store: r.store}).waitState(t, tc.wb.ID, models.StateStopped)
	}
	if _, err := r.m.Billing().BillOnce(ctx); err != nil {
		t.Fatal(err)
	}
	lines, err := r.store.Statement(ctx, r.owner.ID, time.Now().Add(-time.Hour), time.Now().Add(time.Hour))
	if err != nil {
		t.Fatal(err)
	}
	found := map[string]bool{}
	for _, l := range lines {
		if l.Resource == pricing.GPU {
			t.Errorf("a MIG or slice run billed as a whole GPU: %+v", l)
		}
		if !pricing.IsUnit(l.Resource) {
			continue
		}
		want := map[string]int64{pricing.MIG: 700_000, pricing.Slice: 900_000}[l.Resource]
		key := map[string]string{pricing.MIG: "1g.10gb", pricing.Slice: r.gpus[0].Model}[l.Resource]
		if l.RateMicros != want || l.GPUModel != key || l.QuantityMilli != 1000 ||
			l.AmountMicros != pricing.Amount(want, 1000, l.Seconds, false) {
			t.Errorf("%s line %+v, want rate %d for %s", l.Resource, l, want, key)
		}
		found[l.Resource] = true
	}
	if !found[pricing.MIG] || !found[pricing.Slice] {
		t.Fatalf("ledger lines %+v lack a MIG or a slice line", lines)
	}
	// The calculator prices the flavor's shape with the same rates.
	fl, _ := r.store.FlavorByNameOrID(ctx, "mig-1g")
	rate, err := r.m.Billing().HourlyRate(ctx, FlavorShape(fl))
	if err != nil || rate != 700_000+20_000+5_000 { // MIG + 1 core + 1 GiB at the seeded rates
		t.Fatalf("hourly rate of the MIG flavor %d (%v)", rate, err)
	}
}

// TestConcurrentUnitLaunches: 24 launches at once through the manager, half
// for a 1g.10gb instance (2 exist), half for a slice (2 exist): exactly 2 of
// each are accepted, every other is refused no_capacity, and no instance or
// slice is bound twice.
func TestConcurrentUnitLaunches(t *testing.T) {
	t.Parallel()
	r := newUnitRig(t)
	ctx := context.Background()
	type result struct {
		flavor string
		wb     *models.Workbench
		err    error
	}
	results := make(chan result, 24)
	for i := 0; i < 24; i++ {
		flavor := []string{"mig-1g", "slice"}[i%2]
		go func(i int) {
			wb, err := r.m.Launch(ctx, r.owner, LaunchRequest{Name: fmt.Sprintf("c%d", i), Image: "mem", Flavor: flavor})
			results <- result{flavor, wb, err}
		}(i)
	}
	won := map[string]int{}
	bound := map[string]bool{}
	for i := 0; i < 24; i++ {
		res := <-results
		if res.err != nil {
			if refusedCode(res.err) != "no_capacity" {
				t.Errorf("%s: %v", res.flavor, res.err)
			}
			continue
		}
		won[res.flavor]++
		for _, u := range res.wb.Units {
			key := u.UUID
			if u.Slice != nil {
				key = fmt.Sprintf("%s/%d", u.UUID, *u.Slice)
			}
			if bound[key] {
				t.Errorf("unit %s bound twice", key)
			}
			bound[key] = true
		}
	}
	if won["mig-1g"] != 2 || won["slice"] != 2 {
		t.Fatalf("accepted %v, want 2 MIG and 2 slice launches", won)
	}
	r.m.Wait()
}

// A slice flavor while no GPU of its model is shared could never start:
// the launch is refused at once, queue or not, saying an admin must share
// one (it queued with "you are next" and waited out the queue's maximum);
// once a GPU is shared it launches.
func TestSliceLaunchWithNoSharedGPURefused(t *testing.T) {
	r := newUnitRig(t)
	ctx := context.Background()
	if err := r.m.pool.SetShared(ctx, r.shared, models.SharedSetting{}, "admin"); err != nil {
		t.Fatal(err)
	}
	for _, queue := range []bool{false, true} {
		_, err := r.m.Launch(ctx, r.owner, LaunchRequest{Name: fmt.Sprintf("s-%v", queue), Image: "mem", Flavor: "slice", Queue: queue})
		var re *RefusedError
		if !errors.As(err, &re) || re.Code != "no_capacity" || !strings.Contains(re.Message, "no GPU of that model is shared") {
			t.Fatalf("slice launch (queue %v) with no shared GPU: %v", queue, err)
		}
	}
	if err := r.m.pool.SetShared(ctx, r.shared, models.SharedSetting{Slices: 2}, "admin"); err != nil {
		t.Fatal(err)
	}
	r.launchRunning(t, "s", "slice")
}

// An admin lowering a flavor's maximum runtime does not cut short the runs
// already going (their owners planned by the stop time they were shown):
// the run keeps the limit it started with; the next run gets the new one.
func TestFlavorRuntimeEditAppliesToTheNextRun(t *testing.T) {
	r := newUnitRig(t)
	ctx := context.Background()
	fl, err := r.store.FlavorByNameOrID(ctx, "whole")
	if err != nil {
		t.Fatal(err)
	}
	fl.MaxRuntimeS = 2 * 3600
	if err := r.store.UpdateFlavor(ctx, fl); err != nil {
		t.Fatal(err)
	}
	wb := r.launchRunning(t, "w", "whole")
	fl.MaxRuntimeS = 15 * 60
	if err := r.store.UpdateFlavor(ctx, fl); err != nil {
		t.Fatal(err)
	}
	got, _ := r.store.WorkbenchByID(ctx, wb.ID)
	if d := r.m.Deadlines(ctx, got); !d.RuntimeStopAt.Equal(got.StartedAt.Add(2 * time.Hour)) {
		t.Fatalf("the running workbench's stop moved to %s after the flavor's edit; want its start + 2 h", d.RuntimeStopAt)
	}
	if reason := runtimeReason(r.m.runtimeRule(ctx, got), got, got.StartedAt.Add(20*time.Minute)); reason != "" {
		t.Fatalf("the culler would stop it 20 min in: %q", reason)
	}
	if err := r.m.Stop(ctx, wb.ID, ""); err != nil {
		t.Fatal(err)
	}
	mr := r.mem()
	mr.waitState(t, wb.ID, models.StateStopped)
	if err := r.m.Start(ctx, wb.ID, r.owner); err != nil {
		t.Fatal(err)
	}
	got = mr.waitState(t, wb.ID, models.StateRunning)
	if d := r.m.Deadlines(ctx, got); !d.RuntimeStopAt.Equal(got.StartedAt.Add(15 * time.Minute)) {
		t.Fatalf("the next run stops at %s; want its start + the flavor's new 15 min", d.RuntimeStopAt)
	}
}

// TestQuotaRefusalCountsMIGInstances: "GPUs at once" counts units of any
// kind (docs/gpu-units.md). A user with a quota of 1 who holds a MIG
// instance is refused a slice, and the refusal says that an instance
// counts as one — "you hold 1 GPU" read as a miscount to someone holding
// none whole. A whole-GPU user's refusal keeps its plain wording.
func TestQuotaRefusalCountsMIGInstances(t *testing.T) {
	t.Parallel()
	r := newUnitRig(t)
	ctx := context.Background()
	one := int64(1)
	if err := r.store.SetQuota(ctx, models.ScopeUser, r.owner.ID, models.Limits{MaxGPUs: &one}, "admin"); err != nil {
		t.Fatal(err)
	}
	a := r.launchRunning(t, "a", "mig-1g")
	_, err := r.m.Launch(ctx, r.owner, LaunchRequest{Name: "b", Image: "mem", Flavor: "slice"})
	if refusedCode(err) != "quota_exceeded" || !strings.Contains(err.Error(), "each MIG instance or GPU slice counting as one (you hold 1, this asks 1)") {
		t.Fatalf("slice with a MIG instance held and a quota of 1: %v", err)
	}
	if err := r.m.Stop(ctx, a.ID, ""); err != nil {
		t.Fatal(err)
	}
	(&memRig{m: r.m, rt: r.rt, store: r.store}).waitState(t, a.ID, models.StateStopped)
	r.launchRunning(t, "w", "whole")
	_, err = r.m.Launch(ctx, r.owner, LaunchRequest{Name: "c", Image: "mem", Flavor: "whole"})
	if refusedCode(err) != "quota_exceeded" || !strings.Contains(err.Error(), "at most 1 GPU at once (you hold 1, this asks 1)") {
		t.Fatalf("second whole GPU with a quota of 1: %v", err)
	}
}
