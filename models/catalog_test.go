package models

import (
	"context"
	"errors"
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
