package runtime

import (
	"context"
	"fmt"
	"log/slog"
	"strings"
	"sync"

	cerrdefs "github.com/containerd/errdefs"
	"github.com/docker/docker/api/types/system"
	"github.com/docker/docker/client"
)

// Docker implements Runtime with the Docker Engine SDK.
type Docker struct {
	cli client.APIClient
	log *slog.Logger

	// ncpu and memTotal cache the host's CPU count and memory (see
	// hostCPUs).
	ncpuMu   sync.Mutex
	ncpu     int
	memTotal int64

	// mirrors reads the registry mirrors at each pull (SetMirrorSource).
	mirrorsMu sync.Mutex
	mirrors   func(context.Context) (Mirrors, error)
}

// networkMu serialises this process's network creation and removal: two
// workbenches of one user starting together must not race to create the
// same network, and the engine reprograms its firewall non-atomically on
// each network change (see network.go), so fewer overlapping changes is
// better.
var networkMu sync.Mutex

var _ Runtime = (*Docker)(nil)

type options struct {
	clientOpts []client.Opt
	log        *slog.Logger
}

// Option configures NewDocker.
type Option func(*options)

// WithHost points the client at an engine other than the one DOCKER_HOST
// names, e.g. "unix:///run/user/1000/docker.sock".
func WithHost(host string) Option {
	return func(o *options) { o.clientOpts = append(o.clientOpts, client.WithHost(host)) }
}

// WithClientOpts passes extra SDK client options through.
func WithClientOpts(opts ...client.Opt) Option {
	return func(o *options) { o.clientOpts = append(o.clientOpts, opts...) }
}

// WithLogger sets the logger (default slog.Default()).
func WithLogger(l *slog.Logger) Option {
	return func(o *options) { o.log = l }
}

// NewDocker makes a client from the environment (DOCKER_HOST, DOCKER_CERT_PATH,
// ...) that negotiates the API version, so older engines work too. It does
// not contact the engine; call Ping for that.
func NewDocker(opts ...Option) (*Docker, error) {
	o := options{log: slog.Default()}
	for _, opt := range opts {
		opt(&o)
	}
	copts := append([]client.Opt{client.FromEnv, client.WithAPIVersionNegotiation()}, o.clientOpts...)
	cli, err := client.NewClientWithOpts(copts...)
	if err != nil {
		return nil, fmt.Errorf("%w: %v", ErrEngineUnavailable, err)
	}
	return &Docker{cli: cli, log: o.log}, nil
}

// Close releases the client's connections.
func (d *Docker) Close() error { return d.cli.Close() }

// Ping checks that the engine answers.
func (d *Docker) Ping(ctx context.Context) error {
	if _, err := d.cli.Ping(ctx); err != nil {
		return engineErr("ping", err)
	}
	return nil
}

// HasNVIDIA reports whether GPUs can be passed with a device request.
func (d *Docker) HasNVIDIA(ctx context.Context) (bool, error) {
	info, err := d.cli.Info(ctx)
	if err != nil {
		return false, engineErr("engine info", err)
	}
	return nvidiaSupport(info), nil
}

// nvidiaSupport decides from the engine's info whether it can run NVIDIA
// device requests: the "nvidia" runtime is registered, or CDI is on and has
// discovered nvidia.com/gpu devices.
//
// CDI being enabled is not enough on its own: Docker ≥ 27 lists default
// CDI spec directories on every host, GPU or not.
func nvidiaSupport(info system.Info) bool {
	if _, ok := info.Runtimes["nvidia"]; ok {
		return true
	}
	if len(info.CDISpecDirs) == 0 {
		return false
	}
	for _, dev := range info.DiscoveredDevices {
		if dev.Source == "cdi" && strings.HasPrefix(dev.ID, "nvidia.com/gpu") {
			return true
		}
	}
	return false
}

// engineErr wraps err with op, mapping "cannot connect" to
// ErrEngineUnavailable and "no such object" to ErrNotFound so callers can
// use errors.Is without knowing the SDK.
func engineErr(op string, err error) error {
	switch {
	case err == nil:
		return nil
	case client.IsErrConnectionFailed(err):
		return fmt.Errorf("%s: %w: %w", op, ErrEngineUnavailable, err)
	case cerrdefs.IsNotFound(err):
		return fmt.Errorf("%s: %w: %w", op, ErrNotFound, err)
	case cerrdefs.IsConflict(err):
		return fmt.Errorf("%s: %w: %w", op, ErrConflict, err)
	}
	return fmt.Errorf("%s: %w", op, err)
}
