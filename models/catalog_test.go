package models

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"testing"
)

func validImage() Image {
	return Image{Name: "Test", Image: "quay.io/jupyter/pytorch-notebook:cuda12-python-3.11",
		StartCommand: "start-notebook.py --port={port} --base-url={base_url} --token={token}", Enabled: true}
}

func TestImageValidation(t *testing.T) {
	s, _ := newTestStore(t)
	ctx := context.Background()
	bad := []struct {
		mut   func(*Image)
		field string
	}{
		{func(i *Image) { i.Image = "UPPER/Case:tag" }, "image"},
		{func(i *Image) { i.Image = "repo:tag:extra" }, "image"},
		{func(i *Image) { i.Image = "" }, "image"},
		{func(i *Image) { i.StartCommand = "jupyter lab --port={port} --token={token}" }, "start_command"},
		{func(i *Image) { i.StartCommand = "jupyter {port} {base_url} {token} {evil}" }, "start_command"},
		{func(i *Image) { i.StartCommand = "jupyter '{port} {base_url} {token}" }, "start_command"},
		{func(i *Image) { i.RunAsUser = "root" }, "run_as_user"},
		{func(i *Image) { i.RunAsUser = "0:0" }, "run_as_user"},
		{func(i *Image) { i.HomePath = "relative/home" }, "home_path"},
		{func(i *Image) { i.HomePath = "/home/../etc" }, "home_path"},
		{func(i *Image) { i.Name = "" }, "name"},
	}
	for i, c := range bad {
		img := validImage()
		c.mut(&img)
		err := s.CreateImage(ctx, &img)
		var ve *ValidationError
		if !errors.As(err, &ve) || ve.Field != c.field {
			t.Errorf("case %d: err = %v; want validation error on %s", i, err, c.field)
		} else if ve.Message == "" {
			t.Errorf("case %d: empty message", i)
		}
	}
	if imgs, _ := s.ListImages(ctx, false); len(imgs) != 0 {
		t.Fatalf("invalid images half-saved: %d rows", len(imgs))
	}
	img := validImage()
	if err := s.CreateImage(ctx, &img); err != nil {
		t.Fatal(err)
	}
	if img.RunAsUser != "1000" || img.HomePath != "/home/jovyan" {
		t.Fatalf("defaults not applied: %+v", img)
	}
	got, err := s.ImageByNameOrID(ctx, "Test")
	if err != nil || got.ID != img.ID {
		t.Fatalf("by name: %v", err)
	}
	// A failed update leaves the stored row untouched.
	upd := *got
	upd.Image = "bad ref"
	if err := s.UpdateImage(ctx, &upd); err == nil {
		t.Fatal("bad update accepted")
	}
	again, _ := s.ImageByID(ctx, img.ID)
	if again.Image != img.Image {
		t.Fatalf("failed update changed the row: %q", again.Image)
	}
}

func TestExpandStartCommand(t *testing.T) {
	argv, err := ExpandStartCommand(`jupyter lab "--name=my lab" --port={port} --base={base_url} --token={token}`, 8888, "/wb/x/", "a b")
	if err != nil {
		t.Fatal(err)
	}
	want := []string{"jupyter", "lab", "--name=my lab", "--port=8888", "--base=/wb/x/", "--token=a b"}
	if len(argv) != len(want) {
		t.Fatalf("argv = %q", argv)
	}
	for i := range want {
		if argv[i] != want[i] {
			t.Fatalf("argv[%d] = %q, want %q", i, argv[i], want[i])
		}
	}
}

func TestFlavorValidation(t *testing.T) {
	s, _ := newTestStore(t)
	ctx := context.Background()
	bad := []Flavor{
		{Name: "x", GPUCount: 1, CPUMilli: 4000, MemoryMiB: 16 * 1024},                         // no model
		{Name: "x", GPUCount: -1, CPUMilli: 4000, MemoryMiB: 16 * 1024},                        // negative
		{Name: "x", CPUMilli: 0, MemoryMiB: 16 * 1024},                                         // no cpu
		{Name: "x", CPUMilli: 4000, MemoryMiB: 0},                                              // no memory
		{Name: "x", CPUMilli: 4000, MemoryMiB: 1 * 1024, ShmMiB: 4096},                         // shm > memory
		{Name: "x", GPUModel: "H100", GPUCount: 99, CPUMilli: 4000, MemoryMiB: 16 * 1024},      // absurd
		{Name: "bad/name", GPUModel: "H100", GPUCount: 1, CPUMilli: 4000, MemoryMiB: 8 * 1024}, // name
	}
	for i, f := range bad {
		if err := s.CreateFlavor(ctx, &f); err == nil {
			t.Errorf("case %d accepted", i)
		}
	}
	if fs, _ := s.ListFlavors(ctx, false); len(fs) != 0 {
		t.Fatalf("bad flavors saved: %d", len(fs))
	}
}

func TestSeedCatalogAddsFlavorsPerModel(t *testing.T) {
	s, _ := newTestStore(t)
	ctx := context.Background()
	if err := s.SeedCatalog(ctx, []string{"NVIDIA H100 80GB HBM3"}); err != nil {
		t.Fatal(err)
	}
	imgs, _ := s.ListImages(ctx, true)
	if len(imgs) != len(defaultImages) {
		t.Fatalf("seeded %d images", len(imgs))
	}
	fs, _ := s.ListFlavors(ctx, false)
	if len(fs) != 5 {
		t.Fatalf("seeded %d flavors, want CPU + 4 H100", len(fs))
	}
	if _, err := s.FlavorByNameOrID(ctx, "1x H100 80GB HBM3"); err != nil {
		t.Fatalf("flavor name: %v", err)
	}
	// Seeding again adds nothing; a new model adds its flavors.
	s.SeedCatalog(ctx, []string{"NVIDIA H100 80GB HBM3", "NVIDIA A100-SXM4-40GB"})
	fs, _ = s.ListFlavors(ctx, false)
	if len(fs) != 9 {
		t.Fatalf("after second seed: %d flavors, want 9", len(fs))
	}
}

func TestSeedDefaultPricesOncePerKey(t *testing.T) {
	s, _ := newTestStore(t)
	ctx := context.Background()
	m := "NVIDIA H100 80GB HBM3"
	if err := s.SeedDefaultPrices(ctx, []string{m, m, m}); err != nil {
		t.Fatal(err)
	}
	if err := s.SeedDefaultPrices(ctx, []string{m}); err != nil {
		t.Fatal(err)
	}
	hist, _ := s.PriceHistory(ctx)
	if len(hist) != 4 { // gpu|H100, cpu, memory, storage
		t.Fatalf("%d seeded rates, want 4: %+v", len(hist), hist)
	}
}

// The default GPU flavors fit the server they are seeded on: counts up to
// the GPUs it has of the model (its own count too, when not a power of
// two), and each GPU's share of its CPUs and memory, less a tenth of the
// memory for the system, capped at 8 CPUs and 64 GiB per GPU.
func TestSeedCatalogSizesGPUFlavorsForTheServer(t *testing.T) {
	type shape struct {
		count    int
		cpuMilli Millicores
		memMiB   int64
		shmMiB   int
	}
	const gib = 1 << 30
	cases := []struct {
		name  string
		model string
		host  CatalogHost
		want  []shape
	}{
		{"a workstation: 1 GPU, 16 CPUs, 32 GiB", "NVIDIA GeForce RTX 4090",
			CatalogHost{GPUs: map[string]int{"NVIDIA GeForce RTX 4090": 1}, CPUs: 16, MemoryBytes: 32 * gib},
			[]shape{{1, 8000, 28 * 1024, 7 * 1024}}},
		{"a 4-GPU server with 32 CPUs and 256 GiB", "NVIDIA L40S",
			CatalogHost{GPUs: map[string]int{"NVIDIA L40S": 4}, CPUs: 32, MemoryBytes: 256 * gib},
			[]shape{{1, 8000, 57 * 1024, 8192}, {2, 16000, 114 * 1024, 16384}, {4, 32000, 228 * 1024, 32768}}},
		{"6 GPUs: 1, 2, 4 and 6", "NVIDIA H100 80GB HBM3",
			CatalogHost{GPUs: map[string]int{"NVIDIA H100 80GB HBM3": 6}, CPUs: 96, MemoryBytes: 1024 * gib},
			[]shape{{1, 8000, 65536, 8192}, {2, 16000, 131072, 16384}, {4, 32000, 262144, 32768}, {6, 48000, 393216, 49152}}},
		{"two models share the server's CPUs", "NVIDIA A100-SXM4-40GB",
			CatalogHost{GPUs: map[string]int{"NVIDIA A100-SXM4-40GB": 2, "NVIDIA L4": 2}, CPUs: 12, MemoryBytes: 512 * gib},
			[]shape{{1, 3000, 65536, 8192}, {2, 6000, 131072, 16384}}},
		{"a DGX with one of 8 GPUs split into MIG instances: 7 whole", "NVIDIA H100 80GB HBM3",
			CatalogHost{GPUs: map[string]int{"NVIDIA H100 80GB HBM3": 8}, MIGGPUs: map[string]int{"NVIDIA H100 80GB HBM3": 1}, CPUs: 224, MemoryBytes: 2048 * gib},
			[]shape{{1, 8000, 65536, 8192}, {2, 16000, 131072, 16384}, {4, 32000, 262144, 32768}, {7, 56000, 458752, 57344}}},
		{"every GPU split into MIG instances: no whole-GPU flavor", "NVIDIA A100-SXM4-40GB",
			CatalogHost{GPUs: map[string]int{"NVIDIA A100-SXM4-40GB": 2}, MIGGPUs: map[string]int{"NVIDIA A100-SXM4-40GB": 2}, CPUs: 32, MemoryBytes: 256 * gib},
			nil},
		{"size unknown (engine down, Kubernetes): the defaults", "NVIDIA H200",
			CatalogHost{},
			[]shape{{1, 8000, 65536, 8192}, {2, 16000, 131072, 16384}, {4, 32000, 262144, 32768}, {8, 64000, 524288, 65536}}},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			s, _ := newTestStore(t)
			ctx := context.Background()
			if err := s.SeedCatalogFor(ctx, []string{c.model}, c.host); err != nil {
				t.Fatal(err)
			}
			fs, err := s.ListFlavors(ctx, false)
			if err != nil {
				t.Fatal(err)
			}
			var got []shape
			for _, f := range fs {
				if f.GPUModel == c.model {
					got = append(got, shape{f.GPUCount, f.CPUMilli, f.MemoryMiB, f.ShmMiB})
					if want := fmt.Sprintf("%dx %s", f.GPUCount, ShortGPUName(c.model)); f.Name != want {
						t.Errorf("flavor %q, want %q", f.Name, want)
					}
				}
			}
			slices.SortFunc(got, func(a, b shape) int { return a.count - b.count })
			if !slices.Equal(got, c.want) {
				t.Errorf("seeded %+v\nwant     %+v", got, c.want)
			}
		})
	}
}
