package handlers

import (
	"bytes"
	"context"
	"log/slog"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/gin-gonic/gin"

	"workbench/models"
)

// The launch form's and /gpus' price-change notice: a reader who left
// before the prices were read is no warning (make bench-load counted one
// when its clients hung up); a store that fails is one, and the page
// still shows (no notice).
func TestPriceChangesAheadQuietWhenClientGone(t *testing.T) {
	var logs bytes.Buffer
	log := slog.New(slog.NewTextHandler(&logs, &slog.HandlerOptions{Level: slog.LevelInfo}))
	store, err := models.Open(context.Background(), t.TempDir(), log)
	if err != nil {
		t.Fatal(err)
	}
	h := &Handler{store: store, log: log}
	logs.Reset()
	ginCtx := func(ctx context.Context) *gin.Context {
		c, _ := gin.CreateTestContext(httptest.NewRecorder())
		c.Request = httptest.NewRequest("GET", "/gpus", nil).WithContext(ctx)
		return c
	}
	gone, cancel := context.WithCancel(context.Background())
	cancel()
	if got := h.priceChangesAheadAt(ginCtx(gone), time.Now()); got != nil || logs.Len() != 0 {
		t.Fatalf("client gone: %q, logs %q; want no notice and nothing logged", got, logs.String())
	}
	store.Close()
	if got := h.priceChangesAheadAt(ginCtx(context.Background()), time.Now()); got != nil || !strings.Contains(logs.String(), "level=WARN") {
		t.Fatalf("store closed: %q, logs %q; want no notice and a WARN", got, logs.String())
	}
}
