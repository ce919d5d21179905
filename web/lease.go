package web

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"syscall"

	"workbench/models"
	"workbench/orchestrator"
)

// dataIdentity names the database file by device and inode: the same
// portal restarting finds its own crashed lease by it, a copy of the data
// (another file) does not (see orchestrator/lease.go).
func dataIdentity(dataDir string) string {
	fi, err := os.Stat(filepath.Join(dataDir, models.DBFileName))
	if err != nil {
		return ""
	}
	st, ok := fi.Sys().(*syscall.Stat_t)
	if !ok {
		return ""
	}
	return fmt.Sprintf("%d:%d", st.Dev, st.Ino)
}

// takeLease takes the install lease before anything reconciles, so a
// second live portal of the same install stops here with the reason. With
// the engine unreachable the manager takes it once the engine answers.
func (s *Server) takeLease(ctx context.Context) error {
	if s.rt.Ping(ctx) != nil {
		return nil
	}
	err := s.Manager.AcquireLease(ctx)
	var le *orchestrator.LeaseError
	if errors.As(err, &le) {
		return err
	}
	if err != nil && ctx.Err() == nil { // cut short by a stop: not a warning (ServeListeners)
		s.log.Warn("install lease", "err", err)
	}
	return nil
}
