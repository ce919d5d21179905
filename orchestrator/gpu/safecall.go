package gpu

import (
	"fmt"

	"github.com/NVIDIA/go-nvml/pkg/nvml"
)

// go-nvml's mocks are generated moq structs: a method whose Func field was
// never set panics ("method is nil but ... was just called"). The mock
// servers set only a subset (no utilisation, temperature, power, MIG device
// handles), and tests may inject bare mocks. These helpers turn such a panic
// into ERROR_NOT_SUPPORTED, which every caller already treats as "this
// reading is not available", so a gap in a mock can never crash the portal.

// call1 runs an NVML call returning (value, Return).
func call1[T any](f func() (T, nvml.Return)) (v T, ret nvml.Return) {
	defer func() {
		if recover() != nil {
			var zero T
			v, ret = zero, nvml.ERROR_NOT_SUPPORTED
		}
	}()
	return f()
}

// call0 runs an NVML call returning only a Return.
func call0(f func() nvml.Return) (ret nvml.Return) {
	defer func() {
		if recover() != nil {
			ret = nvml.ERROR_NOT_SUPPORTED
		}
	}()
	return f()
}

// callErr runs a go-nvlib helper that returns an error; a panic inside it
// (a mock gap several calls deep) becomes an error.
func callErr(f func() error) (err error) {
	defer func() {
		if r := recover(); r != nil {
			err = fmt.Errorf("not supported by this NVML implementation: %v", r)
		}
	}()
	return f()
}
