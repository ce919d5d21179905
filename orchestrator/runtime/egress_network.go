package runtime

import (
	"context"
	"fmt"

	"github.com/docker/docker/api/types/network"
)

// bridgeNameOption names a bridge network's Linux interface when its
// creator chose one; otherwise the bridge driver calls it br-<id[:12]>.
const bridgeNameOption = "com.docker.network.bridge.name"

// NetworkBridge returns the host interface of bridge network name, where
// egress rules match its containers' packets. ErrNotFound if there is no
// such network.
func (d *Docker) NetworkBridge(ctx context.Context, name string) (string, error) {
	n, err := d.cli.NetworkInspect(ctx, name, network.InspectOptions{})
	if err != nil {
		return "", engineErr("inspect network "+name, err)
	}
	if n.Name != name {
		return "", fmt.Errorf("inspect network %s: %w", name, ErrNotFound)
	}
	if n.Driver != "bridge" {
		return "", fmt.Errorf("network %s is a %q network, not a bridge", name, n.Driver)
	}
	if br := n.Options[bridgeNameOption]; br != "" {
		return br, nil
	}
	if len(n.ID) < 12 {
		return "", fmt.Errorf("network %s has a short id %q", name, n.ID)
	}
	return "br-" + n.ID[:12], nil
}
