package orchestrator

import (
	"context"
	"errors"
	"fmt"
	"time"

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
	// ErrNoPort: the caller's own workbench serves no app on the port
	// asked (neither the image nor the owner listed it).
	ErrNoPort = errors.New("no app on this port")
	// ErrPaused: running, but its container was paused outside the
	// portal (`docker pause`), so Jupyter cannot answer. It is an
	// ErrNotRunning to callers that only tell running from not.
	ErrPaused = fmt.Errorf("%w: its container is paused", ErrNotRunning)
)

// ProxyTarget returns the Jupyter behind workbench id for user userID. Only
// the owner passes — admins too get ErrNoWorkbench (SPEC §4): a notebook runs
// the user's JavaScript in the portal's origin.
func (m *Manager) ProxyTarget(ctx context.Context, id string, userID int64) (Target, error) {
	wb, err := m.route(ctx, id)
	if errors.Is(err, models.ErrNotFound) || (err == nil && wb.OwnerID != userID) {
		return Target{}, ErrNoWorkbench
	}
	if err != nil {
		return Target{}, err
	}
	if wb.State != models.StateRunning || wb.Endpoint == "" {
		return Target{}, ErrNotRunning
	}
	if wb.PausedAt != nil {
		// From the route the proxy already reads (cached): no engine
		// call on the request's path.
		return Target{}, ErrPaused
	}
	return Target{Endpoint: wb.Endpoint, Token: wb.Token}, nil
}

// routeTTL bounds how long a cached route is trusted. Every change this
// process makes to a workbench drops its entry at once (forgetRoute); the
// TTL only guards against changes made elsewhere.
const routeTTL = 30 * time.Second

type cachedRoute struct {
	r     models.WorkbenchRoute
	until time.Time
}

// route returns a workbench's route from memory, or reads and remembers it.
// The proxy asks on every request; reading SQLite each time was most of its
// cost.
func (m *Manager) route(ctx context.Context, id string) (models.WorkbenchRoute, error) {
	now := time.Now()
	if v, ok := m.routes.Load(id); ok && now.Before(v.(cachedRoute).until) {
		return v.(cachedRoute).r, nil
	}
	r, err := m.store.RouteOf(ctx, id)
	if err != nil {
		return r, err
	}
	m.routes.Store(id, cachedRoute{r: r, until: now.Add(routeTTL)})
	return r, nil
}

// forgetRoute drops a workbench's cached route after any change to it.
func (m *Manager) forgetRoute(id string) { m.routes.Delete(id) }
