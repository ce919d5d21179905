package orchestrator

import (
	"context"
	"io"
	"strings"

	"workbench/models"
)

// exitLogLines is how many of a container's last lines are kept when it
// stops or fails: enough to see a traceback, small enough for a table row.
const (
	exitLogLines = 100
	exitLogBytes = 32 << 10
)

// keepExitLogs stores the last lines a workbench's container wrote, so the
// workbench page can still show why it ended after the container is gone
// (a failed launch removes it; a restart may replace it). Best effort: a
// container with no output, or one already gone, leaves what was kept.
func (m *Manager) keepExitLogs(ctx context.Context, id, container string) {
	if container == "" {
		return
	}
	rc, err := m.rt.Logs(ctx, container, exitLogLines, false)
	if err != nil {
		return
	}
	defer rc.Close()
	b, _ := io.ReadAll(io.LimitReader(rc, 4*exitLogBytes))
	s := strings.TrimRight(string(b), "\n")
	if len(s) > exitLogBytes {
		// Keep the end: the last lines say why it stopped.
		s = s[len(s)-exitLogBytes:]
		if i := strings.IndexByte(s, '\n'); i >= 0 {
			s = s[i+1:]
		}
	}
	if strings.TrimSpace(s) == "" {
		return
	}
	m.setFields(ctx, id, models.WorkbenchFields{ExitLogs: new(s)})
}
