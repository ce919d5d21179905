package runtime

import (
	"context"
	"errors"
	"fmt"
	"maps"
	"strconv"

	cerrdefs "github.com/containerd/errdefs"
	"github.com/docker/docker/api/types/container"
	"github.com/docker/docker/api/types/mount"
	"github.com/docker/docker/api/types/network"
	"github.com/docker/docker/client"
)

// Create creates (does not start) a hardened workbench container.
func (d *Docker) Create(ctx context.Context, spec Spec) (string, error) {
	if err := d.checkCPUs(ctx, spec.NanoCPUs); err != nil {
		return "", err
	}
	cfg, host, netCfg, err := containerConfig(spec)
	if err != nil {
		return "", err
	}
	// A digest reference pulled through a registry mirror exists only under
	// the mirror's name.
	if local, found, err := d.localRef(ctx, spec.Image); err == nil && found {
		cfg.Image = local
	}
	resp, err := d.cli.ContainerCreate(ctx, cfg, host, netCfg, nil, spec.Name)
	switch {
	case err == nil:
	case client.IsErrConnectionFailed(err):
		return "", fmt.Errorf("create container %s: %w: %w", spec.Name, ErrEngineUnavailable, err)
	case cerrdefs.IsConflict(err):
		return "", fmt.Errorf("create container %s: %w: %w", spec.Name, ErrConflict, err)
	case cerrdefs.IsNotFound(err):
		// Not ErrNotFound: that means "the container is gone" to callers;
		// here the image or network is what is missing.
		return "", fmt.Errorf("create container %s: image %s or network %s missing: %v", spec.Name, spec.Image, spec.Network, err)
	default:
		return "", fmt.Errorf("create container %s: %w", spec.Name, err)
	}
	for _, w := range resp.Warnings {
		d.log.WarnContext(ctx, "engine warning on create", "container", spec.Name, "warning", w)
	}
	return resp.ID, nil
}

// validateSpec refuses specs that would break isolation or leave a
// container the reconciler cannot recognise.
func validateSpec(s Spec) error {
	var errs []error
	for _, f := range []struct{ what, v string }{
		{"workbench id", s.WorkbenchID}, {"owner", s.Owner}, {"install id", s.InstallID},
		{"name", s.Name}, {"image", s.Image},
	} {
		if f.v == "" {
			errs = append(errs, fmt.Errorf("%s is required", f.what))
		}
	}
	switch s.Network {
	case "":
		errs = append(errs, errors.New("network is required"))
	case "host", "bridge", "default", "none":
		// host: no isolation at all; bridge/default: the engine's shared
		// network lets every container talk to every other; none: the
		// portal could not reach Jupyter.
		errs = append(errs, fmt.Errorf("network %q not allowed: use the owner's own network", s.Network))
	}
	if s.Port <= 0 || s.Port > 65535 {
		errs = append(errs, fmt.Errorf("port %d out of range", s.Port))
	}
	if (s.HomeVolume == "") != (s.HomePath == "") {
		errs = append(errs, errors.New("home volume and home path go together"))
	}
	if err := errors.Join(errs...); err != nil {
		return fmt.Errorf("invalid container spec: %w", err)
	}
	return nil
}

// containerConfig builds the engine's create request from a Spec. It is pure
// so the hardening can be unit-tested without an engine.
func containerConfig(s Spec) (*container.Config, *container.HostConfig, *network.NetworkingConfig, error) {
	if err := validateSpec(s); err != nil {
		return nil, nil, nil, err
	}
	devices, gpuEnv := gpuDeviceRequests(s.GPUs)

	labels := map[string]string{LabelKind: KindWorkbench}
	maps.Copy(labels, s.ExtraLabels)
	// Identity labels last: ExtraLabels must not be able to make a
	// container look like another install's or another owner's.
	labels[LabelID] = s.WorkbenchID
	labels[LabelOwner] = s.Owner
	labels[LabelInstall] = s.InstallID
	labels[LabelPort] = strconv.Itoa(s.Port)

	env := append(append([]string(nil), s.Env...), gpuEnv...)

	cfg := &container.Config{
		Image:  s.Image,
		Cmd:    s.Cmd,
		User:   s.User,
		Env:    env,
		Labels: labels,
		// No Tty: Logs relies on the multiplexed stdout/stderr stream.
		Tty: false,
	}

	var pids *int64
	if s.PidsLimit > 0 {
		pids = &s.PidsLimit
	}
	host := &container.HostConfig{
		NetworkMode: container.NetworkMode(s.Network),
		// No PortBindings and no PublishAllPorts: Jupyter is reachable
		// only at the container's bridge IP, i.e. from this host.
		Privileged: false,
		CapDrop:    []string{"ALL"},
		CapAdd:     append([]string(nil), s.CapAdd...),
		// "=" not ":": engines warn that the colon form is deprecated.
		// Nothing else here, so the default seccomp profile stays on.
		SecurityOpt: []string{"no-new-privileges=true"},
		ShmSize:     s.ShmBytes,
		// The lifecycle manager owns restarts: a container coming back on
		// its own after a host reboot would hold GPUs the database already
		// freed.
		RestartPolicy: container.RestartPolicy{Name: container.RestartPolicyDisabled},
		// A chatty notebook must not fill the host's disk with logs.
		LogConfig: container.LogConfig{Type: "json-file", Config: map[string]string{"max-size": "10m", "max-file": "3"}},
		Resources: container.Resources{
			NanoCPUs:       s.NanoCPUs,
			Memory:         s.MemoryBytes,
			MemorySwap:     s.MemoryBytes, // swap = memory: no swap on top
			PidsLimit:      pids,
			DeviceRequests: devices,
		},
	}
	if s.HomeVolume != "" {
		m := mount.Mount{Type: mount.TypeVolume, Source: s.HomeVolume, Target: s.HomePath}
		if s.HomeNoCopy {
			m.VolumeOptions = &mount.VolumeOptions{NoCopy: true}
		}
		host.Mounts = []mount.Mount{m}
	}
	netCfg := &network.NetworkingConfig{
		EndpointsConfig: map[string]*network.EndpointSettings{s.Network: {}},
	}
	return cfg, host, netCfg, nil
}

// checkCPUs refuses a CPU limit above the host's CPU count: the engine
// would refuse it with its own words, and capping it would bill cores the
// workbench never gets. The orchestrator refuses such a launch before (it
// checks every flavor against the server), so this is the last guard.
func (d *Docker) checkCPUs(ctx context.Context, nano int64) error {
	ncpu := d.hostCPUs(ctx)
	if ncpu > 0 && nano > int64(ncpu)*1e9 {
		return fmt.Errorf("needs %s CPUs; this server has %d", strconv.FormatFloat(float64(nano)/1e9, 'f', -1, 64), ncpu)
	}
	return nil
}

// hostCPUs asks the engine how many CPUs (and how much memory) the host
// has, once: the engine's
// info call takes tens of milliseconds, too slow for every launch.
func (d *Docker) hostCPUs(ctx context.Context) int {
	d.ncpuMu.Lock()
	defer d.ncpuMu.Unlock()
	if d.ncpu == 0 {
		if info, err := d.cli.Info(ctx); err == nil {
			d.ncpu, d.memTotal = info.NCPU, info.MemTotal
		}
	}
	return d.ncpu
}
