package main

import (
	"context"
	"log/slog"
	"os"
	"time"
)

// waitForFile returns true once path exists, false if ctx ends first (the
// container was stopped while held back). It polls: the file is written
// into the container from outside (docker cp), where no notification
// reaches a process that may not even have the directory open.
func waitForFile(ctx context.Context, path string, log *slog.Logger) bool {
	log.Info("waiting for the ready file before listening", "path", path)
	tick := time.NewTicker(50 * time.Millisecond)
	defer tick.Stop()
	for {
		if _, err := os.Stat(path); err == nil {
			return true
		}
		select {
		case <-ctx.Done():
			return false
		case <-tick.C:
		}
	}
}
