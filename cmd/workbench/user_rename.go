package main

import (
	"context"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
	"log/slog"

	"workbench/models"
	"workbench/orchestrator"
	"workbench/web"
)

const userRenameUsage = "usage: workbench user rename OLD NEW [--json]"

// cmdUserRename renames an account from the shell, as the users page does
// (orchestrator.Accounts: the same checks, audit row and notice): what an
// administrator locked out of the web, or a script, uses. The account keeps
// its sessions, tokens, SSH keys, workbenches and home volume; the user is
// told in their notifications, and by email or the webhook where this
// command runs with the portal's WORKBENCH_SMTP_*/NOTIFY_WEBHOOK settings.
// A running portal sees the new name at its next request. Failed logins it
// counted against the old name are in its memory and end with their lock
// time (the web's rename forgets them at once).
func cmdUserRename(ctx context.Context, args []string, stdout, stderr io.Writer) error {
	fs := flag.NewFlagSet("user rename", flag.ContinueOnError)
	fs.SetOutput(stderr)
	var cfg web.Config
	bindServeFlags(fs, &cfg, "data-dir")
	asJSON := fs.Bool("json", false, "print the renamed account as JSON (as `user list --json` lists it)")
	pos, err := parseInterspersed(fs, args)
	if err != nil {
		return err
	}
	if len(pos) != 2 {
		return errors.New(userRenameUsage)
	}
	store, err := openStore(ctx, cfg.DataDir, stderr)
	if err != nil {
		return err
	}
	defer store.Close()
	u, err := liveUserNamed(ctx, store, pos[0])
	if err != nil {
		return err
	}
	accounts := orchestrator.NewAccounts(store, cliLog(stderr))
	accounts.NotifyVia(cfg.PublicURL, cfg.NoticeSenders()...)
	old := u.Username
	renamed, err := accounts.Rename(ctx, orchestrator.CommandLine, u, pos[1])
	if err != nil {
		return fieldError(err, map[string]string{"username": fmt.Sprintf("the new user name %q", pos[1])})
	}
	if *asJSON {
		enc := json.NewEncoder(stdout)
		enc.SetIndent("", "  ")
		return enc.Encode(map[string]any{"renamed": renamed, "old_username": old, "user": u})
	}
	if !renamed {
		fmt.Fprintf(stdout, "%s already has that name; nothing changed\n", old)
		return nil
	}
	fmt.Fprintf(stdout, "renamed %s to %s; they sign in as %s from now on and were told in their notifications "+
		"(their sessions, tokens, SSH keys, workbenches and files are unchanged)\n", old, u.Username, u.Username)
	return nil
}

// liveUserNamed is userNamed for a change to an account: a deleted
// account's tombstone (deleted-<id>, kept for its bills) is not found, as
// on the users page.
func liveUserNamed(ctx context.Context, store *models.Store, name string) (*models.User, error) {
	u, err := userNamed(ctx, store, name)
	if err != nil {
		return nil, err
	}
	if u.Deleted() {
		return nil, fmt.Errorf("user %q: %w (it is a deleted account's record, kept for its bills)", name, models.ErrNotFound)
	}
	return u, nil
}

// cliLog is the log of a command's library calls: warnings and worse, on
// stderr, so stdout stays machine-readable (as openStore's).
func cliLog(stderr io.Writer) *slog.Logger {
	return slog.New(slog.NewTextHandler(stderr, &slog.HandlerOptions{Level: slog.LevelWarn}))
}
