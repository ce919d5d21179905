package main

import (
	"context"
	"flag"
	"fmt"
	"io"
	"log/slog"

	"workbench/orchestrator"
)

// cmdEgressRemove deletes this install's egress rules from the host's
// iptables, for uninstalling: the portal puts them back on its next start
// (and before any launch), so it is for after the workbench network and
// the portal are gone.
func cmdEgressRemove(ctx context.Context, args []string, stdout, stderr io.Writer) error {
	fs := flag.NewFlagSet("egress remove", flag.ContinueOnError)
	fs.SetOutput(stderr)
	dataDir := dataDirFlag(fs)
	pos, err := parseInterspersed(fs, args)
	if err != nil {
		return err
	}
	if err := noArguments("egress remove", pos); err != nil {
		return err
	}
	store, err := openStore(ctx, *dataDir, stderr)
	if err != nil {
		return err
	}
	defer store.Close()
	id, err := store.InstallID(ctx)
	if err != nil {
		return err
	}
	log := slog.New(slog.NewTextHandler(stderr, &slog.HandlerOptions{Level: slog.LevelWarn}))
	if err := orchestrator.RemoveEgressRules(ctx, id, log); err != nil {
		return fmt.Errorf("remove egress rules of install %s: %w", id, err)
	}
	fmt.Fprintf(stdout, "egress rules of install %s removed\n", id)
	// Said every time: a running portal of this install puts them back
	// within a minute, and nothing else would tell the operator.
	fmt.Fprintln(stderr, "note: a portal of this install that still runs puts the rules back within a minute; when uninstalling, stop it first (README \"Uninstall\")")
	return nil
}
