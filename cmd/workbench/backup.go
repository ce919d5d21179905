package main

import (
	"context"
	"flag"
	"fmt"
	"io"
)

func cmdBackup(ctx context.Context, args []string, stdout, stderr io.Writer) error {
	fs := flag.NewFlagSet("backup", flag.ContinueOnError)
	fs.SetOutput(stderr)
	dataDir := dataDirFlag(fs)
	pos, err := parseInterspersed(fs, args)
	if err != nil {
		return err
	}
	if len(pos) != 1 {
		return fmt.Errorf("usage: workbench backup FILE")
	}
	store, err := openStoreAs(ctx, *dataDir, stderr) // as it is: a backup before an upgrade is of the schema before it
	if err != nil {
		return err
	}
	defer store.Close()
	if err := store.Backup(ctx, pos[0]); err != nil {
		return fmt.Errorf("backup to %s: %w", pos[0], err)
	}
	fmt.Fprintf(stdout, "database copied to %s\n", pos[0])
	return nil
}
