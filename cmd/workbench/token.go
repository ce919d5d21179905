package main

import (
	"context"
	"flag"
	"fmt"
	"io"
	"time"

	"workbench/models"
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
	if *days < 0 || *days > 3650 {
		return fmt.Errorf("--expires-days must be between 0 (never) and 3650, as in the portal")
	}
	if *name == "" {
		// To the millisecond: two tokens made by a script in one second
		// had the same name, and the second was refused.
		*name = "cli-" + time.Now().UTC().Format("20060102-150405.000")
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
	var secret string
	err = store.InTx(ctx, func(tx *models.Store) error {
		t, sec, err := tx.CreateToken(ctx, u.ID, *name, time.Duration(*days)*24*time.Hour)
		if err != nil {
			return err
		}
		secret = sec
		// A new credential leaves a trace, as in the portal (never the secret).
		return tx.Audit(ctx, "cli", "token.create", u.Username, nil, map[string]any{"token_id": t.ID, "name": t.Name, "prefix": t.Prefix, "expires_at": t.ExpiresAt})
	})
	if err != nil {
		return fieldError(err, map[string]string{"name": "--name"})
	}
	fmt.Fprintln(stdout, secret)
	return nil
}
