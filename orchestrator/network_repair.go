package orchestrator

import (
	"context"
	"errors"

	"workbench/models"
	"workbench/orchestrator/runtime"
)

// The install's network (Manager.network) can be removed behind the
// portal's back: `docker network disconnect -f` of its containers, then
// `docker network rm`. A running workbench is then unreachable through the
// proxy, and a stopped one's container still names the removed network's
// id, so the engine refuses to start it ("network … not found"). The
// portal makes the network again, with the settings it always has, and
// puts the container back on it: at a start (restart) and at every
// reconciliation (reconnectRunning).

// reattach makes sure the install's network exists (as createContainer
// makes it, egress rules on its bridge included) and container cid is on
// it. errors.ErrUnsupported where the engine has no such network to be
// off (Kubernetes).
//
// The engine calls wait for their answers even when ctx ends (a launch
// cancelled meanwhile): the engine makes a network whose client gave up,
// after the canceller has looked (see createContainer).
func (m *Manager) reattach(ctx context.Context, cid, owner string) error {
	ectx := context.WithoutCancel(ctx)
	if err := m.rt.EnsureNetwork(ectx, m.network(), m.labels("", owner)); err != nil {
		return err
	}
	// Before the container is back on a bridge that may be new: its rules
	// name the bridge's interface.
	if err := m.egressBeforeStart(ctx); err != nil {
		return err
	}
	return m.rt.ConnectNetwork(ectx, cid, m.network())
}

// reconnectRunning puts back on the install's network the running
// container c of workbench wb, found with no address there, and returns
// it as it is now (c unchanged when that fails: the next reconciliation
// tries again). Warned once per time it is found off, naming the
// workbench: the proxy cannot reach it meanwhile.
func (m *Manager) reconnectRunning(ctx context.Context, wb *models.Workbench, owner *models.User, c runtime.ContainerInfo) runtime.ContainerInfo {
	_, warned := m.offNetwork.LoadOrStore(wb.ID, true)
	err := m.reattach(ctx, c.ID, owner.HomeName())
	if errors.Is(err, errors.ErrUnsupported) {
		m.offNetwork.Delete(wb.ID)
		return c
	}
	if !warned {
		m.log.Warn("reconcile: running workbench was off the portal's network (removed or disconnected outside the portal); putting it back",
			"id", wb.ID, "name", wb.Name, "owner", owner.Username, "network", m.network(), "err", err)
	}
	if err != nil {
		return c
	}
	info, err := m.rt.Inspect(ctx, c.ID)
	if err != nil {
		return c
	}
	m.offNetwork.Delete(wb.ID)
	m.log.Info("reconcile: workbench back on the portal's network", "id", wb.ID, "ip", info.IPs[m.network()])
	return info
}
