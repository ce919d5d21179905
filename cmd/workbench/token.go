package main

import (
	"context"
	"flag"
	"fmt"
	"io"
	"time"
)

// cmdTokenCreate prints a new API token alone on stdout (SPEC §8), so
// scripts can do TOKEN=$(workbench token create alice).
func cmdTokenCreate(ctx context.Context, args []string, stdout, stderr io.Writer) error {
	fs := flag.NewFlagSet("token create", flag.ContinueOnError)
	fs.SetOutput(stderr)
	dataDir := dataDirFlag(fs)
	name := fs.String("name", "", "token name (default: cli-<time>)")
	days := fs.Int("expires-days", 90, "days until the token expires; 0 = never")
	pos, err := parseInterspersed(fs, args)
	if err != nil {
		return err
	}
	if len(pos) != 1 {
		return fmt.Errorf("usage: workbench token create USER [--name N] [--expires-days D]")
	}
	if *days < 0 {
		return fmt.Errorf("--expires-days must be 0 (never) or more")
	}
	if *name == "" {
		*name = "cli-" + time.Now().UTC().Format("20060102-150405")
	}
	store, err := openStore(ctx, *dataDir, stderr)
	if err != nil {
		return err
	}
	defer store.Close()
	u, err := userNamed(ctx, store, pos[0])
	if err != nil {
		return err
	}
	if u.Disabled {
		return fmt.Errorf("user %q is disabled", u.Username)
	}
	_, secret, err := store.CreateToken(ctx, u.ID, *name, time.Duration(*days)*24*time.Hour)
	if err != nil {
		return fieldError(err, map[string]string{"name": "--name"})
	}
	fmt.Fprintln(stdout, secret)
	return nil
}
