package models

import (
	"fmt"
	"log/slog"
	"os"
)

// ensurePrivateDir creates the data directory 0700, and tightens an existing
// one to 0700: it holds the database with password hashes and tokens, which
// nobody but the portal's own user needs to read. A directory the portal does
// not own (a mount it cannot chmod) is left as it is, with a warning.
func ensurePrivateDir(dir string, log *slog.Logger) error {
	if err := os.MkdirAll(dir, 0o700); err != nil {
		return fmt.Errorf("data directory %q: %w", dir, err)
	}
	fi, err := os.Stat(dir)
	if err != nil {
		return fmt.Errorf("data directory %q: %w", dir, err)
	}
	if fi.Mode().Perm()&0o077 != 0 {
		if err := os.Chmod(dir, 0o700); err != nil {
			log.Warn("data directory is readable by others and cannot be made private", "dir", dir, "mode", fi.Mode().Perm().String(), "err", err)
		}
	}
	return nil
}
