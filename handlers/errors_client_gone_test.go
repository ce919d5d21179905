package handlers

import (
	"bytes"
	"context"
	"fmt"
	"log/slog"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/gin-gonic/gin"
)

// TestFailQuietWhenClientGone: an error caused by the client going away
// (its request cancelled) is recorded as 499 at debug level, not as a 500
// ERROR; a real failure still is one.
func TestFailQuietWhenClientGone(t *testing.T) {
	gin.SetMode(gin.ReleaseMode)
	var logs bytes.Buffer
	h := &Handler{log: slog.New(slog.NewTextHandler(&logs, &slog.HandlerOptions{Level: slog.LevelInfo}))}

	rec := httptest.NewRecorder()
	c, _ := gin.CreateTestContext(rec)
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	c.Request = httptest.NewRequest("GET", "/api/v1/workbenches", nil).WithContext(ctx)
	h.fail(c, fmt.Errorf("list workbenches: %w", context.Canceled))
	if rec.Code != 499 || logs.Len() != 0 {
		t.Fatalf("client gone: status %d, logs %q; want 499 and nothing at info", rec.Code, logs.String())
	}

	rec = httptest.NewRecorder()
	c, _ = gin.CreateTestContext(rec)
	c.Request = httptest.NewRequest("GET", "/api/v1/workbenches", nil)
	h.fail(c, fmt.Errorf("disk I/O error"))
	if rec.Code != 500 || !strings.Contains(logs.String(), "level=ERROR") {
		t.Fatalf("real failure: status %d, logs %q; want 500 and an ERROR", rec.Code, logs.String())
	}
}
