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

// SeedCatalog fills an empty catalog with the default images and a CPU
// flavor, and adds default flavors for every detected GPU model that has none
// yet (so a new GPU model in the server shows up ready to launch).
func (s *Store) SeedCatalog(ctx context.Context, gpuModels []string) error {
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
		for _, n := range []int{1, 2, 4, 8} {
			f := &Flavor{Name: fmt.Sprintf("%dx %s", n, short), GPUModel: model, GPUCount: n,
				CPUMilli: Millicores(8000 * n), MemoryMiB: 64 * 1024 * int64(n), ShmMiB: 8192 * n, Enabled: true}
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
