package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"io/fs"
	"log/slog"
	"os"
	"path/filepath"
	"strings"

	"workbench/models"
	"workbench/web"
)

// parseInterspersed parses flags that may come before or after positional
// arguments (`user add alice --admin`), which the flag package alone does not.
func parseInterspersed(fs *flag.FlagSet, args []string) ([]string, error) {
	var positional []string
	for {
		if err := fs.Parse(args); err != nil {
			return nil, err
		}
		args = fs.Args()
		if len(args) == 0 {
			return positional, nil
		}
		if args[0] == "--" {
			return append(positional, args[1:]...), nil
		}
		positional = append(positional, args[0])
		args = args[1:]
	}
}

// noArguments refuses words a command that takes none was given: the flag
// package stops at the first one, so `workbench gpus extra --data-dir D`
// read no --data-dir and quietly used another install's data.
func noArguments(command string, pos []string) error {
	if len(pos) > 0 {
		return fmt.Errorf("workbench %s takes no arguments (got %q); options start with --", command, strings.Join(pos, " "))
	}
	return nil
}

// bindServeFlags binds every serve setting into cfg (so their WORKBENCH_*
// values and checks apply as in serve) and shows on fs only the ones named:
// a command that reads a few of serve's settings lists those in its
// --help, not all forty.
func bindServeFlags(fs *flag.FlagSet, cfg *web.Config, names ...string) {
	all := flag.NewFlagSet("serve", flag.ContinueOnError)
	cfg.BindFlags(all)
	for _, name := range names {
		f := all.Lookup(name)
		fs.Var(f.Value, f.Name, f.Usage)
	}
}

// dataDirFlag adds --data-dir with the same default as serve.
func dataDirFlag(fs *flag.FlagSet) *string {
	var c web.Config
	tmp := flag.NewFlagSet("", flag.ContinueOnError)
	c.BindFlags(tmp)
	return fs.String("data-dir", c.DataDir, "data directory (WORKBENCH_DATA_DIR)")
}

// openStore opens the database of a data directory for a CLI command. Logs
// of the store (migrations) go to stderr so stdout stays machine-readable.
// openStore opens the portal's database in dataDir for a command other
// than serve. The database must exist: opening creates one, so a mistyped
// --data-dir (or none, under cron, in another directory) made a fresh
// empty install — a "backup" with no users that said it was copied, an
// egress removal of a made-up install, a user added where no portal ever
// starts.
//
// It never migrates: the schema is the running portal's, and a command of
// a newer binary must not upgrade it under an older portal (nor make the
// pre-upgrade backup a copy of the upgraded schema). A schema older than
// this binary's is refused, with what to do; backups take it as it is
// (openStoreAs).
func openStore(ctx context.Context, dataDir string, stderr io.Writer) (*models.Store, error) {
	store, err := openStoreAs(ctx, dataDir, stderr)
	if err != nil {
		return nil, err
	}
	if store.SchemaBehind() {
		store.Close()
		return nil, fmt.Errorf("the database in %s is from an older version of workbench: start `workbench serve` of this version once (it upgrades the database; back it up first with the version that runs now), then run this command again", dataDir)
	}
	return store, nil
}

// openStoreAs is openStore without the schema's version check: the
// database as it is, for a backup.
func openStoreAs(ctx context.Context, dataDir string, stderr io.Writer) (*models.Store, error) {
	if strings.TrimSpace(dataDir) == "" {
		return nil, fmt.Errorf("--data-dir must not be empty")
	}
	db := filepath.Join(dataDir, models.DBFileName)
	if _, err := os.Stat(db); errors.Is(err, fs.ErrNotExist) {
		abs, _ := filepath.Abs(dataDir)
		return nil, fmt.Errorf("no portal data in %s (no %s): pass the portal's data directory with --data-dir or WORKBENCH_DATA_DIR, or start `workbench serve` there once first", abs, models.DBFileName)
	}
	return models.Open(ctx, dataDir, slog.New(slog.NewTextHandler(stderr, &slog.HandlerOptions{Level: slog.LevelWarn})), models.WithoutMigrations())
}

// userNamed is the user a command names; not found reads `user "ada": not found`.
func userNamed(ctx context.Context, store *models.Store, name string) (*models.User, error) {
	u, err := store.UserByUsername(ctx, name)
	if err != nil {
		return nil, fmt.Errorf("user %q: %w", name, err)
	}
	return u, nil
}

func versionString() string { return "workbench " + web.Version }
