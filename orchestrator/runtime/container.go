package runtime

import (
	"context"
	"errors"
	"math"
	"strings"
	"time"

	"github.com/docker/docker/api/types/container"
	"github.com/docker/docker/api/types/filters"
)

// Start starts a created or stopped container.
func (d *Docker) Start(ctx context.Context, id string) error {
	return engineErr("start container "+id, d.cli.ContainerStart(ctx, id, container.StartOptions{}))
}

// Stop asks the container to stop and kills it after grace.
func (d *Docker) Stop(ctx context.Context, id string, grace time.Duration) error {
	// The engine takes whole seconds; round up so a short grace is not
	// turned into an immediate SIGKILL.
	secs := int(math.Ceil(grace.Seconds()))
	if secs < 0 {
		secs = 0
	}
	return engineErr("stop container "+id, d.cli.ContainerStop(ctx, id, container.StopOptions{Timeout: &secs}))
}

// Remove force-removes the container and its anonymous volumes (named
// volumes, like the home volume, are kept). Already gone is fine.
func (d *Docker) Remove(ctx context.Context, id string) error {
	err := engineErr("remove container "+id, d.cli.ContainerRemove(ctx, id, container.RemoveOptions{Force: true, RemoveVolumes: true}))
	if errors.Is(err, ErrNotFound) {
		return nil
	}
	// "removal already in progress": someone else is doing our job.
	if errors.Is(err, ErrConflict) && strings.Contains(err.Error(), "already in progress") {
		return nil
	}
	return err
}

// Inspect reads the container's current state.
func (d *Docker) Inspect(ctx context.Context, id string) (ContainerInfo, error) {
	resp, err := d.cli.ContainerInspect(ctx, id)
	if err != nil {
		return ContainerInfo{}, engineErr("inspect container "+id, err)
	}
	return infoFromInspect(resp), nil
}

// List returns every container of this install, running or not.
func (d *Docker) List(ctx context.Context, installID string) ([]ContainerInfo, error) {
	summaries, err := d.cli.ContainerList(ctx, container.ListOptions{
		All:     true,
		Filters: filters.NewArgs(filters.Arg("label", LabelInstall+"="+installID)),
	})
	if err != nil {
		return nil, engineErr("list containers", err)
	}
	// The list lacks start/finish times and exit details the reconciler
	// needs, so inspect each one; there are few per install.
	out := make([]ContainerInfo, 0, len(summaries))
	for _, s := range summaries {
		info, err := d.Inspect(ctx, s.ID)
		if errors.Is(err, ErrNotFound) {
			continue // removed since the list was taken
		}
		if err != nil {
			return nil, err
		}
		out = append(out, info)
	}
	return out, nil
}

func infoFromInspect(r container.InspectResponse) ContainerInfo {
	info := ContainerInfo{IPs: map[string]string{}}
	if r.ContainerJSONBase != nil {
		info.ID = r.ID
		info.Name = strings.TrimPrefix(r.Name, "/")
		info.Created = parseTime(r.Created)
		if st := r.State; st != nil {
			info.State = string(st.Status)
			info.Running = st.Running
			info.Paused = st.Paused
			info.StartedAt = parseTime(st.StartedAt)
			info.FinishedAt = parseTime(st.FinishedAt)
			info.ExitCode = st.ExitCode
			info.OOMKilled = st.OOMKilled
			info.Error = st.Error
		}
	}
	if r.Config != nil {
		info.Image = r.Config.Image
		info.Labels = r.Config.Labels
		info.Env = r.Config.Env
	}
	if r.NetworkSettings != nil {
		for name, ep := range r.NetworkSettings.Networks {
			if ep != nil && ep.IPAddress != "" {
				info.IPs[name] = ep.IPAddress
			}
		}
	}
	return info
}

// parseTime reads the engine's RFC 3339 times; the engine writes
// 0001-01-01T00:00:00Z for "never", which parses to the zero time.
func parseTime(s string) time.Time {
	t, err := time.Parse(time.RFC3339Nano, s)
	if err != nil {
		return time.Time{}
	}
	return t
}
