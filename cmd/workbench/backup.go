package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"path/filepath"

	"workbench/models"
)

func cmdBackup(ctx context.Context, args []string, stdout, stderr io.Writer) error {
	fs := flag.NewFlagSet("backup", flag.ContinueOnError)
	fs.SetOutput(stderr)
	dataDir := dataDirFlag(fs)
	// A scheduled backup writes the same path every night: without it
	// the job failed from the second night on.
	force := fs.Bool("force", false, "replace FILE if it exists (the new copy is renamed over it once complete)")
	pos, err := parseInterspersed(fs, args)
	if err != nil {
		return err
	}
	if len(pos) != 1 {
		return fmt.Errorf("usage: workbench backup [--force] FILE")
	}
	store, err := openStoreAs(ctx, *dataDir, stderr) // as it is: a backup before an upgrade is of the schema before it
	if err != nil {
		return err
	}
	defer store.Close()
	backup := store.Backup
	if *force {
		backup = store.BackupReplacing
	}
	if err := backup(ctx, pos[0]); err != nil {
		if errors.Is(err, os.ErrExist) {
			return fmt.Errorf("backup: %w; give --force to replace it", err)
		}
		if models.Unwritable(err) {
			// The copy is what is written: its disk, not the database's.
			abs, _ := filepath.Abs(pos[0])
			return fmt.Errorf("backup: %w", &unwritableError{err: err, file: abs, backup: true})
		}
		return fmt.Errorf("backup: %w", err)
	}
	fmt.Fprintf(stdout, "database copied to %s\n", pos[0])
	return nil
}
