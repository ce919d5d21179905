package orchestrator

import (
	"context"
	"errors"
	"net"
	"strconv"

	"workbench/models"
)

// PortTarget is where an extra HTTP port of workbench id listens, for its
// owner userID only, while it runs. A port the image does not declare is
// ErrNoWorkbench: the proxy never reaches arbitrary ports of a container.
// Declared means by the image, or by the owner on this workbench.
func (m *Manager) PortTarget(ctx context.Context, id string, userID int64, port int) (Target, error) {
	t, err := m.ProxyTarget(ctx, id, userID)
	if err != nil {
		return Target{}, err
	}
	wb, err := m.store.WorkbenchByID(ctx, id)
	if errors.Is(err, models.ErrNotFound) {
		return Target{}, ErrNoWorkbench
	} else if err != nil {
		return Target{}, err
	}
	img, err := m.store.ImageByID(ctx, wb.ImageID)
	if err != nil {
		return Target{}, err
	}
	if !img.HasExtraPort(port) && !wb.HasExtraPort(port) {
		return Target{}, ErrNoPort // the owner's: ProxyTarget checked
	}
	host, _, err := net.SplitHostPort(t.Endpoint)
	if err != nil {
		return Target{}, err
	}
	return Target{Endpoint: net.JoinHostPort(host, strconv.Itoa(port))}, nil
}
