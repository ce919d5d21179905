package runtime

import (
	"context"
	"errors"
	"time"

	cerrdefs "github.com/containerd/errdefs"
	"github.com/docker/docker/api/types"
	"github.com/docker/docker/api/types/volume"
)

// EnsureVolume creates a local volume unless it already exists, and
// reports whether it created it. An existing volume is kept as it is: it
// holds a user's home.
func (d *Docker) EnsureVolume(ctx context.Context, name string, labels map[string]string) (bool, error) {
	_, err := d.cli.VolumeInspect(ctx, name)
	if err == nil {
		return false, nil
	}
	if err = engineErr("inspect volume "+name, err); !errors.Is(err, ErrNotFound) {
		return false, err
	}
	_, err = d.cli.VolumeCreate(ctx, volume.CreateOptions{Name: name, Driver: "local", Labels: labels})
	return err == nil, engineErr("create volume "+name, err)
}

// RemoveVolume deletes a volume and its data. A volume still mounted by a
// container is an error (ErrConflict), never forced.
func (d *Docker) RemoveVolume(ctx context.Context, name string) error {
	err := engineErr("remove volume "+name, d.cli.VolumeRemove(ctx, name, false))
	if errors.Is(err, ErrNotFound) {
		return nil
	}
	return err
}

// VolumeUsage is one of this install's volumes and the bytes it holds.
type VolumeUsage struct {
	Name   string
	Labels map[string]string
	Bytes  int64 // -1 when the engine could not measure it
	// CreatedAt is when the volume was made (zero if unknown): storage is
	// billed from then, not from the first measurement minutes later.
	CreatedAt time.Time
}

// VolumeSizes measures this install's volumes. The engine walks each
// volume's files to answer, so callers ask every few minutes, not per request.
func (d *Docker) VolumeSizes(ctx context.Context, installID string) ([]VolumeUsage, error) {
	du, err := d.diskUsage(ctx)
	if err != nil {
		return nil, engineErr("disk usage", err)
	}
	var out []VolumeUsage
	for _, v := range du.Volumes {
		if v == nil || v.Labels[LabelInstall] != installID {
			continue
		}
		size := int64(-1)
		if v.UsageData != nil {
			size = v.UsageData.Size
		}
		created, _ := time.Parse(time.RFC3339, v.CreatedAt)
		out = append(out, VolumeUsage{Name: v.Name, Labels: v.Labels, Bytes: size, CreatedAt: created.UTC()})
	}
	return out, nil
}

// diskUsageTries bounds how often a refused disk-usage query is asked again.
var diskUsageTries = 4

// diskUsage asks the engine for the volumes' sizes. The engine runs one
// disk-usage scan at a time and refuses a second with a conflict ("a disk
// usage operation is already running") — `docker system df`, another portal
// on the same engine, or an admin's tool. That scan ends by itself, so a
// refused query waits and asks again rather than losing the metering pass.
func (d *Docker) diskUsage(ctx context.Context) (types.DiskUsage, error) {
	wait := 250 * time.Millisecond
	for try := 1; ; try++ {
		du, err := d.cli.DiskUsage(ctx, types.DiskUsageOptions{Types: []types.DiskUsageObject{types.VolumeObject}})
		if err == nil || !cerrdefs.IsConflict(err) || try == diskUsageTries {
			return du, err
		}
		select {
		case <-ctx.Done():
			return du, err
		case <-time.After(wait):
		}
		wait *= 2
	}
}

// VolumeInfo is a volume's labels and creation time (second precision).
type VolumeInfo struct {
	Name      string
	Labels    map[string]string
	CreatedAt time.Time
}

// CreateVolume creates a volume, or returns the one that already has that
// name untouched (the engine creates a name once: the first creator's
// labels stay, which makes it a lock).
func (d *Docker) CreateVolume(ctx context.Context, name string, labels map[string]string) (VolumeInfo, error) {
	v, err := d.cli.VolumeCreate(ctx, volume.CreateOptions{Name: name, Driver: "local", Labels: labels})
	if err != nil {
		return VolumeInfo{}, engineErr("create volume "+name, err)
	}
	// The create answer of an existing volume may echo the request: the
	// stored labels are what count.
	return d.InspectVolume(ctx, v.Name)
}

// InspectVolume returns a volume's labels and creation time.
func (d *Docker) InspectVolume(ctx context.Context, name string) (VolumeInfo, error) {
	v, err := d.cli.VolumeInspect(ctx, name)
	if err != nil {
		return VolumeInfo{}, engineErr("inspect volume "+name, err)
	}
	created, _ := time.Parse(time.RFC3339, v.CreatedAt)
	return VolumeInfo{Name: v.Name, Labels: v.Labels, CreatedAt: created}, nil
}
