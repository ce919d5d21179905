package web_test

import (
	"context"
	"os"
	"strconv"
	"strings"
	"testing"

	"github.com/NVIDIA/go-nvml/pkg/nvml/mock/dgxh100"
	"github.com/PuerkitoBio/goquery"

	"workbench/models"
	"workbench/orchestrator/gpu"
	"workbench/web"
)

// A portal's first start on a small GPU server offers a GPU flavor that
// can be launched there. The server here is one GPU the portal takes for
// real (a go-nvml mock reported as NVML, not simulated) on this machine's
// engine, whose CPUs and memory are far below a DGX's. The default flavors
// were 1x, 2x, 4x and 8x with 8 CPUs and 64 GiB per GPU, and the launch
// form greyed every one of them out ("needs 8 CPUs; this server has 2");
// now there is one, "1x", sized to the server, and it can be chosen.
func TestFirstStartOffersALaunchableGPUFlavor(t *testing.T) {
	srv := dgxh100.New()
	srv.Devices = srv.Devices[:1]
	p := newPortal(t, func(c *web.Config) { c.GPUOptions = []gpu.Option{gpu.WithNVML(srv, false, "nvml")} })
	ctx := context.Background()
	fls, err := p.srv.Store.ListFlavors(ctx, true)
	if err != nil {
		t.Fatal(err)
	}
	var gpuFlavors []string
	for _, f := range fls {
		if f.GPUCount > 0 {
			gpuFlavors = append(gpuFlavors, f.Name)
			if why := p.srv.Manager.ExceedsHost(ctx, &f); why != "" {
				t.Errorf("seeded flavor %s does not fit this server: %s", f.Name, why)
			}
		}
	}
	if len(gpuFlavors) != 1 || gpuFlavors[0] != "1x H100 80GB HBM3" {
		t.Fatalf("GPU flavors seeded for a one-GPU server: %v, want only 1x H100 80GB HBM3", gpuFlavors)
	}

	if _, err := p.srv.Store.CreateUser(ctx, models.NewUser{Username: "alice", Password: "alice-password"}); err != nil {
		t.Fatal(err)
	}
	uc := p.client()
	p.login(uc, "alice", "alice-password")
	_, page := p.get(uc, "/workbenches/new")
	doc, err := goquery.NewDocumentFromReader(strings.NewReader(page))
	if err != nil {
		t.Fatal(err)
	}
	choice := doc.Find(`[data-testid=flavor-choice]`).FilterFunction(func(_ int, s *goquery.Selection) bool {
		return s.Find(`input[value="1x H100 80GB HBM3"]`).Length() == 1
	})
	if choice.Length() != 1 {
		t.Fatalf("the launch form has no 1x H100 choice:\n%s", page)
	}
	if _, disabled := choice.Find(`input`).Attr("disabled"); disabled {
		t.Errorf("the one GPU flavor is greyed out: %q", strings.Join(strings.Fields(choice.Text()), " "))
	}
	if strings.Contains(choice.Text(), "simulated") {
		t.Error("a GPU taken for real is labelled simulated")
	}
}

// A first start while the engine does not answer sizes the default GPU
// flavors by this machine's memory (as its CPUs), not 64 GiB per GPU: the
// engine had no size to report, and a server under 64 GiB would then
// refuse every seeded GPU flavor once the engine is back ("needs 64 GiB
// of memory").
func TestFirstStartWithTheEngineDownSizesFlavorsByThisMachine(t *testing.T) {
	t.Setenv("DOCKER_HOST", "unix:///nonexistent-workbench-engine.sock")
	srv := dgxh100.New()
	srv.Devices = srv.Devices[:1]
	p := newPortal(t, func(c *web.Config) { c.GPUOptions = []gpu.Option{gpu.WithNVML(srv, false, "nvml")} })
	local := meminfoTotal(t)
	fl, err := p.srv.Store.FlavorByNameOrID(context.Background(), "1x H100 80GB HBM3")
	if err != nil {
		t.Fatal(err)
	}
	if fl.MemoryMiB<<20 > local {
		t.Fatalf("seeded %s asks %d MiB; this machine has %d MiB", fl.Name, fl.MemoryMiB, local>>20)
	}
}

// meminfoTotal is this machine's MemTotal in bytes.
func meminfoTotal(t *testing.T) int64 {
	t.Helper()
	b, err := os.ReadFile("/proc/meminfo")
	if err != nil {
		t.Skip("no /proc/meminfo:", err)
	}
	for _, line := range strings.Split(string(b), "\n") {
		if f := strings.Fields(line); len(f) == 3 && f[0] == "MemTotal:" {
			kb, err := strconv.ParseInt(f[1], 10, 64)
			if err != nil {
				t.Fatal(err)
			}
			return kb << 10
		}
	}
	t.Fatal("no MemTotal in /proc/meminfo")
	return 0
}
