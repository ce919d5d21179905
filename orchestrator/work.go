package orchestrator

import "context"

// detached runs work a person asked for (stop, delete) to its end in the
// manager, whatever happens to the request that asked: a closed tab, a page
// reload or a client timeout must not cut it half-way. work gets ctx's
// values but not its cancellation; ctx only bounds how long the caller
// waits for the result (when it ends first, its error is returned while
// the work goes on). Manager.Wait waits for detached work too.
func (m *Manager) detached(ctx context.Context, work func(ctx context.Context) error) error {
	done := make(chan error, 1)
	wctx := context.WithoutCancel(ctx)
	m.wg.Add(1)
	go func() {
		defer m.wg.Done()
		done <- work(wctx)
	}()
	select {
	case err := <-done:
		return err
	case <-ctx.Done():
		return ctx.Err()
	}
}
