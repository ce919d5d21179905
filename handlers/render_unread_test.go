package handlers

import (
	"bytes"
	"context"
	"log/slog"
	"net/http/httptest"
	"strings"
	"testing"

	"workbench/models"
)

// The top bar's unread count: a reader who left before it was read is no
// warning (make bench-load counted ten of them when its clients hung up);
// a store that fails is one, and the page still shows (count 0).
func TestUnreadCountQuietWhenClientGone(t *testing.T) {
	var logs bytes.Buffer
	log := slog.New(slog.NewTextHandler(&logs, &slog.HandlerOptions{Level: slog.LevelInfo}))
	store, err := models.Open(context.Background(), t.TempDir(), log)
	if err != nil {
		t.Fatal(err)
	}
	h := &Handler{store: store, log: log}
	logs.Reset()

	gone, cancel := context.WithCancel(context.Background())
	cancel()
	if n := h.unreadCount(httptest.NewRequest("GET", "/", nil).WithContext(gone), 1); n != 0 || logs.Len() != 0 {
		t.Fatalf("client gone: count %d, logs %q; want 0 and nothing", n, logs.String())
	}
	store.Close()
	if n := h.unreadCount(httptest.NewRequest("GET", "/", nil), 1); n != 0 || !strings.Contains(logs.String(), "level=WARN") {
		t.Fatalf("store closed: count %d, logs %q; want 0 and a WARN", n, logs.String())
	}
}
