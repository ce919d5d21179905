package models

import "context"

type openHookKey struct{}

// WithOpenHook returns ctx carrying fn, which Open calls on every store it
// opens with that context. Tests make the store refuse writes (QueryOnly)
// as a full or read-only disk does, where the store is opened out of their
// reach (`workbench serve` opens its own).
func WithOpenHook(ctx context.Context, fn func(*Store)) context.Context {
	return context.WithValue(ctx, openHookKey{}, fn)
}

// openHook calls ctx's open hook, if any, on s and returns s.
func openHook(ctx context.Context, s *Store) *Store {
	if fn, ok := ctx.Value(openHookKey{}).(func(*Store)); ok {
		fn(s)
	}
	return s
}
