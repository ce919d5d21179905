package gpu

import (
	"context"
	"io"
	"log/slog"
	"testing"
	"time"
)

func quietLogger() *slog.Logger { return slog.New(slog.NewTextHandler(io.Discard, nil)) }

func testCtx(t *testing.T) context.Context {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	t.Cleanup(cancel)
	return ctx
}

func mustNew(t *testing.T, mode string, opts ...Option) Inventory {
	t.Helper()
	m, err := ParseMode(mode)
	if err != nil {
		t.Fatal(err)
	}
	inv, err := New(m, append([]Option{WithLogger(quietLogger())}, opts...)...)
	if err != nil {
		t.Fatalf("New(%s): %v", mode, err)
	}
	t.Cleanup(func() { _ = inv.Close() })
	return inv
}
