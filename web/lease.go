package web

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"syscall"
	"time"

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

// newIdentity gives this data its own install id (serve --new-identity),
// for a copy of an install run beside the original. Run on the data of
// the original while it ran (the lease refusal suggested the flag), it
// rewrote the live install id: the original then stopped its own
// workbenches as "the original's", told their owners their homes were
// removed, and orphaned its volumes and firewall rules. So it refuses
// while a live portal holds this install's lease on this very database
// file (same device and inode: a copy is another file), and when the
// engine that would say so does not answer; nothing is rewritten then.
func (s *Server) newIdentity(ctx context.Context, out io.Writer) error {
	if err := s.rt.Ping(ctx); err != nil {
		return fmt.Errorf("--new-identity: refused, nothing was changed: the container engine does not answer (%v), "+
			"so it cannot tell whether a running portal uses this data; start again once the engine answers", err)
	}
	installID, err := s.Store.InstallID(ctx)
	if err != nil {
		return err
	}
	holder, err := orchestrator.LiveLeaseHolder(ctx, s.rt, installID)
	if err != nil {
		return fmt.Errorf("--new-identity: refused, nothing was changed: read the install lease: %w", err)
	}
	if own := dataIdentity(s.cfg.DataDir); holder != nil && own != "" && holder.Data == own {
		abs, _ := filepath.Abs(s.cfg.DataDir)
		return fmt.Errorf("--new-identity: refused, nothing was changed: a running portal (process %s on host %s, lease renewed %s ago) "+
			"uses this very database (%s) as install %s; this is not a copy. "+
			"--new-identity is only for a COPY in another data directory (a restored backup): to clone the install, "+
			"`workbench backup FILE`, put FILE as %s in a new data directory and start that with --new-identity. "+
			"If that portal has just stopped, try again in %s",
			holder.PID, holder.Host, time.Since(holder.LastBeat).Round(time.Second), filepath.Join(abs, models.DBFileName),
			installID, models.DBFileName, orchestrator.LeaseStale().Round(time.Second))
	}
	id, err := s.Store.NewInstallID(ctx)
	if err != nil {
		return err
	}
	fmt.Fprintf(out, "this data now has its own install id %s: it manages only the containers it launches from now on\n", id)
	return nil
}
