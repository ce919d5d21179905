package runtime

import (
	"context"
	"errors"
	"fmt"

	cerrdefs "github.com/containerd/errdefs"
	"github.com/docker/docker/api/types/network"
)

// iccOption is the bridge driver option that, set to "false", drops
// traffic between containers on the same bridge. Workbenches on it then
// reach neither each other nor anything but the outside world, and the
// portal reaches each through the host side of the bridge.
const iccOption = "com.docker.network.bridge.enable_icc"

// EnsureNetwork creates the bridge network all of an install's
// workbenches share (the lifecycle manager asks for one per install, see
// Manager.network); with icc off no two workbench containers on it can
// talk. An existing network of that name is accepted only if it is such a
// bridge, so a hand-made network cannot silently weaken isolation.
//
// Caveat, measured on Docker 20.10 (iptables backend): every network
// creation on the host deletes and re-inserts the FORWARD jump to
// DOCKER-ISOLATION-STAGE-1 and puts the new bridge's ACCEPT rules first,
// so for a fraction of a second traffic between *different* bridges is
// accepted, and a connection opened then stays up (conntrack ESTABLISHED).
// Traffic between containers on the *same* icc=false bridge is dropped by
// a rule that is never moved, so it has no such gap. One shared icc=false
// network per install is therefore the stronger choice on such engines.
func (d *Docker) EnsureNetwork(ctx context.Context, name string, labels map[string]string) error {
	networkMu.Lock()
	defer networkMu.Unlock()

	err := d.checkNetwork(ctx, name)
	if !errors.Is(err, ErrNotFound) {
		return err
	}
	noIPv6 := false
	_, err = d.cli.NetworkCreate(ctx, name, network.CreateOptions{
		Driver:   "bridge",
		Internal: false, // users may pip install; only inter-container traffic is cut
		// IPv4 only, asked for explicitly: an engine configured to give
		// new networks IPv6 (default-network-opts) would otherwise do so
		// here, and the egress firewall and icc=false are IPv4 rules
		// (iptables): over IPv6 a workbench reached the host's services
		// and other users' workbenches.
		EnableIPv6: &noIPv6,
		Options:    map[string]string{iccOption: "false"},
		Labels:     labels,
	})
	err = engineErr("create network "+name, err)
	if errors.Is(err, ErrConflict) {
		// Another portal process created it between our look and our
		// create; accept it if it is right.
		return d.checkNetwork(ctx, name)
	}
	if err != nil {
		return err
	}
	// An engine that enabled IPv6 anyway gets no workbench on it.
	if err := d.checkNetwork(ctx, name); err != nil {
		_ = d.cli.NetworkRemove(ctx, name)
		return err
	}
	return nil
}

// checkNetwork returns ErrNotFound if name does not exist, nil if it is a
// bridge with icc disabled and no IPv6, an error otherwise. IPv6 is
// refused because the portal's isolation is IPv4 firewalling: the egress
// rules and the host INPUT rule are iptables rules, and the engine applies
// icc=false to IPv6 only where its ip6tables support is on, so on an IPv6
// network a workbench reaches the host and other users' workbenches.
func (d *Docker) checkNetwork(ctx context.Context, name string) error {
	n, err := d.cli.NetworkInspect(ctx, name, network.InspectOptions{})
	if err != nil {
		return engineErr("inspect network "+name, err)
	}
	// Inspect also matches on id prefixes; only an exact name counts.
	if n.Name != name {
		return fmt.Errorf("inspect network %s: %w", name, ErrNotFound)
	}
	if n.Driver != "bridge" || n.Options[iccOption] != "false" {
		return fmt.Errorf("network %s exists but is not a bridge with inter-container traffic disabled (driver %q, %s=%q)",
			name, n.Driver, iccOption, n.Options[iccOption])
	}
	if n.EnableIPv6 {
		return fmt.Errorf("network %s has IPv6 enabled, which the workbench firewall does not cover (it filters IPv4 only): "+
			"remove it once no workbench runs (docker network rm %s) and the portal makes it again without IPv6", name, name)
	}
	return nil
}

// RemoveNetwork deletes a network; missing is fine. Not part of Runtime: the
// lifecycle manager keeps its install's network for good; tests need it.
func (d *Docker) RemoveNetwork(ctx context.Context, name string) error {
	networkMu.Lock()
	defer networkMu.Unlock()
	err := engineErr("remove network "+name, d.cli.NetworkRemove(ctx, name))
	if errors.Is(err, ErrNotFound) {
		return nil
	}
	return err
}

// ConnectNetwork attaches container id to network name. A stale
// attachment of that name (to a network since removed, whose id the
// container still carries) is force-dropped first: the engine keeps it
// and answers every start with "network <old id> not found".
func (d *Docker) ConnectNetwork(ctx context.Context, id, name string) error {
	n, err := d.cli.NetworkInspect(ctx, name, network.InspectOptions{})
	if err != nil {
		return engineErr("inspect network "+name, err)
	}
	c, err := d.cli.ContainerInspect(ctx, id)
	if err != nil {
		return engineErr("inspect container "+id, err)
	}
	if c.NetworkSettings != nil {
		if ep := c.NetworkSettings.Networks[name]; ep != nil {
			// No id: a stopped container attached since; the engine
			// looks the network up by name when it starts.
			if ep.NetworkID == n.ID || ep.NetworkID == "" {
				return nil
			}
			// Forced and by name, as `docker network disconnect -f`: the
			// engine drops the stale entry of a stopped container (by the
			// old id it answers "not connected").
			if err := d.cli.NetworkDisconnect(ctx, name, id, true); err != nil && !cerrdefs.IsNotFound(err) {
				return engineErr("disconnect container "+id+" from the removed network "+name, err)
			}
		}
	}
	return engineErr("connect container "+id+" to network "+name, d.cli.NetworkConnect(ctx, n.ID, id, nil))
}
