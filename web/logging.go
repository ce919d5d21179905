package web

import (
	"fmt"
	"io"
	"log/slog"
	"strings"
)

func parseLevel(s string) (slog.Level, error) {
	var l slog.Level
	err := l.UnmarshalText([]byte(strings.ToUpper(s)))
	if err != nil {
		return 0, fmt.Errorf("unknown log level %q", s)
	}
	return l, nil
}

// NewLogger builds the portal's structured logger.
func NewLogger(w io.Writer, format, level string) *slog.Logger {
	l, _ := parseLevel(level)
	opts := &slog.HandlerOptions{Level: l}
	if format == "json" {
		return slog.New(slog.NewJSONHandler(w, opts))
	}
	return slog.New(slog.NewTextHandler(w, opts))
}
