package orchestrator

import (
	"context"
	"errors"

	"workbench/models"
)

// Target is where the proxy sends a workbench's traffic.
type Target struct {
	Endpoint string // host:port
	Token    string
}

// Proxy errors; the proxy maps them to 404 and 503.
var (
	ErrNoWorkbench = errors.New("no such workbench")
	ErrNotRunning  = errors.New("workbench not running")
)

// ProxyTarget returns the Jupyter behind workbench id for user userID. Only
// the owner passes — admins too get ErrNoWorkbench (SPEC §4): a notebook runs
// the user's JavaScript in the portal's origin.
func (m *Manager) ProxyTarget(ctx context.Context, id string, userID int64) (Target, error) {
	wb, err := m.store.WorkbenchByID(ctx, id)
	if errors.Is(err, models.ErrNotFound) || (err == nil && wb.OwnerID != userID) {
		return Target{}, ErrNoWorkbench
	}
	if err != nil {
		return Target{}, err
	}
	if wb.State != models.StateRunning || wb.Endpoint == "" {
		return Target{}, ErrNotRunning
	}
	return Target{Endpoint: wb.Endpoint, Token: wb.Token}, nil
}
