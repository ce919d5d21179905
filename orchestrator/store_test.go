package orchestrator

import (
	"context"
	"log/slog"
	"testing"

	"workbench/models"
)

// openStore opens a fresh SQLite store in the test's temporary directory,
// closed when the test ends.
func openStore(t testing.TB, log *slog.Logger) *models.Store {
	t.Helper()
	store, err := models.Open(context.Background(), t.TempDir(), log)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { store.Close() })
	return store
}
