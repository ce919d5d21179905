package runtime

import (
	"context"
	"errors"

	"github.com/docker/docker/api/types/volume"
)

// EnsureVolume creates a local volume unless it already exists. An existing
// volume is kept as it is: it holds a user's home.
func (d *Docker) EnsureVolume(ctx context.Context, name string, labels map[string]string) error {
	_, err := d.cli.VolumeInspect(ctx, name)
	if err == nil {
		return nil
	}
	if err = engineErr("inspect volume "+name, err); !errors.Is(err, ErrNotFound) {
		return err
	}
	_, err = d.cli.VolumeCreate(ctx, volume.CreateOptions{Name: name, Driver: "local", Labels: labels})
	return engineErr("create volume "+name, err)
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
