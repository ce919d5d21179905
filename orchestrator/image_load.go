package orchestrator

import (
	"context"
	"errors"
	"io"
)

// LoadImage loads a `docker save` archive into the engine, for a server
// that cannot reach a registry: a catalog image whose reference is among
// the names loaded is then present and launches without a pull.
func (m *Manager) LoadImage(ctx context.Context, archive io.Reader) ([]string, error) {
	if err := m.rt.Ping(ctx); err != nil {
		return nil, errors.Join(ErrEngineUnavailable, err)
	}
	defer m.forgetImages()
	return m.rt.LoadImage(ctx, archive)
}
