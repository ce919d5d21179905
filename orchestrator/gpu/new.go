package gpu

import (
	"fmt"

	"github.com/NVIDIA/go-nvml/pkg/nvml"
)

// nvmlLibraryName is what go-nvml dlopens; named in the no-driver Status.
const nvmlLibraryName = "libnvidia-ml.so.1"

// New builds the inventory for mode.
//
//   - "none": the null backend.
//   - "mock:X": go-nvml's mock server X, reported as simulated.
//   - "auto": the real NVML library, initialised once here. If the library
//     cannot be loaded or the kernel driver is absent, the null backend is
//     returned (with a WARN) whose Status says why. "auto" never falls back
//     to a mock: simulated GPUs in a real deployment would be handed out
//     to users as if they existed.
//
// Any other NVML init failure (no permission, version mismatch, ...) is
// returned as an error: the host has a driver that is broken, and running
// on as if it had no GPUs would hide that from the operator.
func New(mode Mode, opts ...Option) (Inventory, error) {
	o := buildOptions(opts)
	switch mode.Kind {
	case KindNone:
		return newNull(reasonf("GPU inventory disabled (mode none); running without GPUs")), nil
	case KindAuto, KindMock:
	default:
		return nil, fmt.Errorf("invalid GPU mode %q", mode.String())
	}

	if o.lib != nil {
		return newInjected(o)
	}
	if mode.Kind == KindMock {
		lib, err := newMockServer(mode.Mock)
		if err != nil {
			return nil, err
		}
		label := mockLabels[mode.Mock]
		return newNVMLInventory(lib, KindMock+":"+mode.Mock, true, label, o.logger)
	}
	return newAuto(o)
}

// newAuto opens the real NVML library.
func newAuto(o options) (Inventory, error) {
	lib := nvml.New()
	ret := lib.Init()
	switch ret {
	case nvml.SUCCESS:
		return newNVMLInventory(lib, "nvml", false, "NVML", o.logger)
	case nvml.ERROR_LIBRARY_NOT_FOUND:
		reason := reasonf("no NVIDIA driver found: %s could not be loaded; running without GPUs", nvmlLibraryName)
		o.logger.Warn("GPU inventory: "+reason, "mode", KindAuto)
		return newNull(reason), nil
	case nvml.ERROR_DRIVER_NOT_LOADED:
		reason := reasonf("no NVIDIA driver found: %s is present but the NVIDIA kernel driver is not loaded; running without GPUs", nvmlLibraryName)
		o.logger.Warn("GPU inventory: "+reason, "mode", KindAuto)
		return newNull(reason), nil
	default:
		return nil, fmt.Errorf("NVML init failed: %v", ret)
	}
}

// newInjected wraps a library given through WithNVML. A bare mock may have
// no InitFunc (the call panics, see safecall.go); that is not a failure.
func newInjected(o options) (Inventory, error) {
	ret := call0(o.lib.Init)
	if ret != nvml.SUCCESS && ret != nvml.ERROR_NOT_SUPPORTED {
		return nil, fmt.Errorf("NVML init failed: %v", ret)
	}
	label := "NVML"
	if o.simulated {
		label = o.backend
	}
	return newNVMLInventory(o.lib, o.backend, o.simulated, label, o.logger)
}
