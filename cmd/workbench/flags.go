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
	"strconv"
	"strings"

	"workbench/models"
	"workbench/web"
)

// parseInterspersed parses flags that may come before or after positional
// arguments (`user add alice --admin`), which the flag package alone does not.
// A word that reads as a negative number ("-5", "-12.50") is an argument,
// not a flag (no flag is named by a number): `ledger credit ada -5` was
// refused as "flag provided but not defined: -5", before the command could
// say what is wrong with the amount. After "--" every word is an argument.
func parseInterspersed(fs *flag.FlagSet, args []string) ([]string, error) {
	var positional []string
	for len(args) > 0 {
		n := nextArgument(fs, args)
		if err := fs.Parse(args[:n]); err != nil {
			return nil, err
		}
		positional = append(positional, fs.Args()...)
		switch {
		case n == len(args):
			return positional, nil
		case args[n] == "--":
			return append(positional, args[n+1:]...), nil
		}
		positional = append(positional, args[n])
		args = args[n+1:]
	}
	return positional, nil
}

// nextArgument is the index in args of the first word that is neither a
// flag nor a flag's value ("--" included), len(args) if none. A flag that
// takes a value takes the next word whatever it is (`--reason -5`), as the
// flag package does; an unknown flag is left for fs.Parse to refuse.
func nextArgument(fs *flag.FlagSet, args []string) int {
	for i := 0; i < len(args); i++ {
		a := args[i]
		if a == "--" || a == "-" || !strings.HasPrefix(a, "-") || negativeNumber(a) {
			return i
		}
		name := strings.TrimLeft(a, "-")
		if strings.Contains(name, "=") {
			continue
		}
		if f := fs.Lookup(name); f != nil {
			if b, ok := f.Value.(interface{ IsBoolFlag() bool }); !ok || !b.IsBoolFlag() {
				i++ // its value
			}
		}
	}
	return len(args)
}

// negativeNumber reports whether s reads as a negative number ("-5",
// "-0.5", "-.5").
func negativeNumber(s string) bool {
	if len(s) < 2 || s[0] != '-' {
		return false
	}
	_, err := strconv.ParseFloat(s[1:], 64)
	return err == nil && (s[1] >= '0' && s[1] <= '9' || s[1] == '.')
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
	store, err := models.Open(ctx, dataDir, slog.New(slog.NewTextHandler(stderr, &slog.HandlerOptions{Level: slog.LevelWarn})), models.WithoutMigrations())
	if err != nil {
		return nil, err
	}
	noteOpened(ctx, store.Path())
	if hook, ok := ctx.Value(storeHookKey{}).(func(*models.Store)); ok {
		hook(store)
	}
	return store, nil
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
