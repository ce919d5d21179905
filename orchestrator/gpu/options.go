package gpu

import (
	"log/slog"

	"github.com/NVIDIA/go-nvml/pkg/nvml"
)

// Option configures New.
type Option func(*options)

type options struct {
	logger *slog.Logger

	// lib, when set, replaces the library the mode would select.
	lib       nvml.Interface
	simulated bool
	backend   string
}

// WithLogger sets the logger (default slog.Default()).
func WithLogger(l *slog.Logger) Option {
	return func(o *options) {
		if l != nil {
			o.logger = l
		}
	}
}

// WithNVML injects any nvml.Interface — a real library opened with custom
// options, or a go-nvml mock prepared by a test (MIG enabled, instances
// created). It replaces the library chosen by "auto" or "mock:*"; mode
// "none" ignores it. simulated and backendName are reported as given
// (backendName defaults to "nvml", or "mock" when simulated).
func WithNVML(lib nvml.Interface, simulated bool, backendName string) Option {
	return func(o *options) {
		o.lib = lib
		o.simulated = simulated
		o.backend = backendName
	}
}

func buildOptions(opts []Option) options {
	o := options{logger: slog.Default()}
	for _, opt := range opts {
		opt(&o)
	}
	if o.lib != nil && o.backend == "" {
		o.backend = "nvml"
		if o.simulated {
			o.backend = KindMock
		}
	}
	return o
}
