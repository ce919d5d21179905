package models

import (
	"context"
	"fmt"
	"sort"
	"strings"
	"time"
)

// defaultImages is the catalog a new installation starts with: the images
// research teams use most. Admins edit or disable them in the catalog page.
var defaultImages = []Image{
	{
		Name:         "PyTorch (CUDA 12)",
		Image:        "quay.io/jupyter/pytorch-notebook:cuda12-python-3.11",
		Description:  "Jupyter Docker Stacks PyTorch notebook with CUDA 12: JupyterLab, PyTorch, torchvision, the SciPy stack.",
		Tags:         "CUDA 12,PyTorch,Python 3.11",
		StartCommand: "start-notebook.py --ServerApp.ip=0.0.0.0 --ServerApp.port={port} --ServerApp.base_url={base_url} --IdentityProvider.token={token} --ServerApp.allow_remote_access=True",
		RunAsUser:    "1000",
		HomePath:     "/home/jovyan",
		Enabled:      true,
	},
	{
		Name:         "TensorFlow (CUDA)",
		Image:        "quay.io/jupyter/tensorflow-notebook:cuda-latest",
		Description:  "Jupyter Docker Stacks TensorFlow notebook with CUDA: JupyterLab, TensorFlow, Keras, the SciPy stack.",
		Tags:         "CUDA,TensorFlow,Keras",
		StartCommand: "start-notebook.py --ServerApp.ip=0.0.0.0 --ServerApp.port={port} --ServerApp.base_url={base_url} --IdentityProvider.token={token} --ServerApp.allow_remote_access=True",
		RunAsUser:    "1000",
		HomePath:     "/home/jovyan",
		Enabled:      true,
	},
	{
		Name:         "NVIDIA NGC PyTorch",
		Image:        "nvcr.io/nvidia/pytorch:24.10-py3",
		Description:  "NVIDIA's optimised PyTorch container (NGC 24.10): CUDA 12.6, cuDNN, NCCL, Apex, JupyterLab.",
		Tags:         "CUDA 12.6,PyTorch,NGC",
		StartCommand: "jupyter lab --no-browser --ip=0.0.0.0 --port={port} --ServerApp.base_url={base_url} --IdentityProvider.token={token} --ServerApp.allow_remote_access=True",
		RunAsUser:    "1000",
		HomePath:     "/home/jovyan",
		Enabled:      true,
	},
}

// SeedCatalog is SeedCatalogFor a server of unknown size: GPU flavors of
// 1, 2, 4 and 8 GPUs with 8 CPUs and 64 GiB per GPU.
func (s *Store) SeedCatalog(ctx context.Context, gpuModels []string) error {
	return s.SeedCatalogFor(ctx, gpuModels, CatalogHost{})
}

// CatalogHost is what the default GPU flavors are sized by. Zero values
// are unknown, and the defaults apply.
type CatalogHost struct {
	GPUs map[string]int // GPUs of each model on the server
	// MIGGPUs are those of GPUs split into MIG instances: never whole
	// (the portal does not repartition), so no whole-GPU flavor counts
	// them (an "8x" flavor with one of 8 split could never launch).
	MIGGPUs     map[string]int
	CPUs        int
	MemoryBytes int64
}

// Default GPU flavor shape per GPU, for a server big enough (a DGX: 224
// CPUs and 2 TiB for 8 GPUs).
const (
	seedCPUsPerGPU   = 8
	seedMemMiBPerGPU = 64 * 1024
	seedShmMiBPerGPU = 8 * 1024
)

// gpuFlavorSizes are the GPU counts of a model's default flavors: those
// of 1, 2, 4 and 8 the server has whole GPUs enough for, and its own count
// where that is not one of them (6 GPUs: 1, 2, 4 and 6). Unknown: all
// four. None where every GPU of the model is split into MIG instances.
func (h CatalogHost) gpuFlavorSizes(model string) []int {
	have := h.GPUs[model]
	if have <= 0 {
		return []int{1, 2, 4, 8}
	}
	if have -= h.MIGGPUs[model]; have <= 0 {
		return nil
	}
	var out []int
	for _, n := range []int{1, 2, 4, 8} {
		if n <= have {
			out = append(out, n)
		}
	}
	if have < 8 && out[len(out)-1] != have {
		out = append(out, have)
	}
	return out
}

// perGPU is the CPU and memory share of one GPU: the server's CPUs and
// memory (less a tenth, at least 2 GiB, for the system and the portal)
// divided among all its GPUs, capped at the defaults. A workstation with
// one GPU, 16 CPUs and 32 GiB gets a "1x" flavor of 8 CPUs and 28 GiB it
// can run, not one of 64 GiB the launch form would have to refuse.
func (h CatalogHost) perGPU() (cpuMilli Millicores, memMiB int64) {
	cpuMilli, memMiB = Millicores(seedCPUsPerGPU*1000), int64(seedMemMiBPerGPU)
	gpus := 0
	for _, n := range h.GPUs {
		gpus += n
	}
	if gpus == 0 {
		return cpuMilli, memMiB
	}
	if h.CPUs > 0 {
		cpuMilli = min(cpuMilli, Millicores(max(1, h.CPUs/gpus)*1000))
	}
	if h.MemoryBytes > 0 {
		usable := h.MemoryBytes - max(2<<30, h.MemoryBytes/10)
		memMiB = min(memMiB, max(1024, usable/int64(gpus)>>30<<10)) // whole GiB
	}
	return cpuMilli, memMiB
}

// SeedCatalogFor fills an empty catalog with the default images and a CPU
// flavor, and adds default flavors for every detected GPU model that has none
// yet (so a new GPU model in the server shows up ready to launch), sized
// for host (see CatalogHost).
func (s *Store) SeedCatalogFor(ctx context.Context, gpuModels []string, host CatalogHost) error {
	images, err := s.ListImages(ctx, false)
	if err != nil {
		return err
	}
	if len(images) == 0 {
		for _, img := range defaultImages {
			img := img
			if err := s.CreateImage(ctx, &img); err != nil {
				return fmt.Errorf("seed image %s: %w", img.Name, err)
			}
		}
	}
	flavors, err := s.ListFlavors(ctx, false)
	if err != nil {
		return err
	}
	if len(flavors) == 0 {
		if err := s.CreateFlavor(ctx, &Flavor{Name: "CPU small", CPUMilli: 2000, MemoryMiB: 8 * 1024, ShmMiB: 1024, Enabled: true}); err != nil {
			return err
		}
	}
	have := map[string]bool{}
	for _, f := range flavors {
		have[f.GPUModel] = true
	}
	for _, model := range gpuModels {
		if model == "" || have[model] {
			continue
		}
		have[model] = true
		short := ShortGPUName(model)
		cpu, mem := host.perGPU()
		for _, n := range host.gpuFlavorSizes(model) {
			f := &Flavor{Name: fmt.Sprintf("%dx %s", n, short), GPUModel: model, GPUCount: n,
				CPUMilli: cpu * Millicores(n), MemoryMiB: mem * int64(n), ShmMiB: int(min(seedShmMiBPerGPU, mem/4)) * n, Enabled: true}
			if err := s.CreateFlavor(ctx, f); err != nil {
				return fmt.Errorf("seed flavor %s: %w", f.Name, err)
			}
		}
	}
	return nil
}

// SeedGPUIdleDemoFlavor adds, for the demo (WORKBENCH_GPU_DEMO_LOAD), a
// one-GPU flavor of model with a GPU-idle timeout, so an idle holder is
// warned and then released out of the box. It does nothing where a flavor
// of that model already has a GPU-idle timeout (an admin's, or this one,
// changed or not).
func (s *Store) SeedGPUIdleDemoFlavor(ctx context.Context, model string, timeout time.Duration) error {
	if model == "" || timeout <= 0 {
		return nil
	}
	flavors, err := s.ListFlavors(ctx, false)
	if err != nil {
		return err
	}
	for _, f := range flavors {
		if f.GPUModel == model && f.GPUIdleTimeoutS > 0 {
			return nil
		}
	}
	f := &Flavor{Name: fmt.Sprintf("1x %s (GPU-idle %d min)", ShortGPUName(model), int(timeout.Minutes())), GPUModel: model, GPUCount: 1,
		CPUMilli: 8000, MemoryMiB: 64 * 1024, ShmMiB: 8192, GPUIdleTimeoutS: int64(timeout.Seconds()), Enabled: true}
	if len(f.Name) > 50 {
		f.Name = fmt.Sprintf("1x GPU (GPU-idle %d min)", int(timeout.Minutes()))
	}
	if err := s.CreateFlavor(ctx, f); err != nil {
		return fmt.Errorf("seed demo flavor %s: %w", f.Name, err)
	}
	return nil
}

// ShortGPUName drops the vendor prefix NVML puts on every model name
// ("NVIDIA H100 80GB HBM3" → "H100 80GB HBM3") and characters flavor names
// do not allow.
func ShortGPUName(model string) string {
	s := strings.TrimSpace(strings.TrimPrefix(model, "NVIDIA "))
	var b strings.Builder
	for _, c := range s {
		if c < 128 && (c == ' ' || c == '.' || c == '-' || c == '_' || c == '(' || c == ')' || c == '+' ||
			(c >= '0' && c <= '9') || (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z')) {
			b.WriteRune(c)
		}
	}
	out := b.String()
	if len(out) > 50 {
		out = out[:50]
	}
	return strings.TrimSpace(out)
}

// SeedMIGFlavors adds a one-instance flavor for each MIG profile found in
// the inventory (profile → GPU model) that no flavor asks for yet, so MIG
// instances an admin made with nvidia-smi mig can be launched at once. It
// never recreates one an admin changed or disabled (any flavor of that
// profile and model counts).
func (s *Store) SeedMIGFlavors(ctx context.Context, profiles map[string]string) error {
	if len(profiles) == 0 {
		return nil
	}
	flavors, err := s.ListFlavors(ctx, false)
	if err != nil {
		return err
	}
	have := map[string]bool{}
	for _, f := range flavors {
		if f.UnitKind == UnitMIG {
			have[f.MIGProfile+"|"+f.GPUModel] = true
		}
	}
	names := make([]string, 0, len(profiles))
	for p := range profiles {
		names = append(names, p)
	}
	sort.Strings(names)
	for _, p := range names {
		model := profiles[p]
		if have[p+"|"+model] || !migProfileRe.MatchString(p) {
			continue
		}
		f := &Flavor{Name: fmt.Sprintf("1x MIG %s (%s)", p, ShortGPUName(model)), GPUModel: model, GPUCount: 1, UnitKind: UnitMIG, MIGProfile: p,
			CPUMilli: 2000, MemoryMiB: 16 * 1024, ShmMiB: 1024, Enabled: true}
		if err := s.CreateFlavor(ctx, f); err != nil {
			return fmt.Errorf("seed flavor %s: %w", f.Name, err)
		}
	}
	return nil
}
