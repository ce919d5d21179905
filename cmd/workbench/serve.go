package main

import (
	"context"
	"flag"
	"io"
	"path/filepath"

	"workbench/models"
	"workbench/web"
)

func cmdServe(ctx context.Context, args []string, stdout, stderr io.Writer) error {
	var cfg web.Config
	fs := flag.NewFlagSet("serve", flag.ContinueOnError)
	fs.SetOutput(stderr)
	cfg.BindFlags(fs)
	newIdentity := fs.Bool("new-identity", false, "give this data a new install id first: only for a COPY of an install (a restored backup in another data directory) run beside the original; refused on the data of a running portal")
	pos, err := parseInterspersed(fs, args)
	if err != nil {
		return err
	}
	if err := noArguments("serve", pos); err != nil {
		return err
	}
	if err := cfg.Validate(); err != nil {
		return err
	}
	// The new id is written by NewServer, once the engine can say whether
	// a running portal uses this very data (it then refuses).
	cfg.NewIdentity = *newIdentity
	// Every address is bound first: a port in use must stop the start
	// before the first admin's one-time password is printed (and used
	// up) and before any background work begins.
	ls, err := web.ListenAll(cfg)
	if err != nil {
		return err
	}
	log := web.NewLogger(stderr, cfg.LogFormat, cfg.LogLevel)
	// A start the data directory's disk refuses (full or read-only:
	// migrations, the first seeds) is told as every command's is, with
	// the database's path and what to do, not in SQLite's bare words.
	noteOpened(ctx, filepath.Join(cfg.DataDir, models.DBFileName))
	srv, err := web.NewServer(ctx, cfg, log, stdout)
	if err != nil {
		ls.Close()
		return err
	}
	defer srv.Close()
	if err := recordGPUSource(ctx, srv.Store, cfg); err != nil {
		log.Warn("record the GPU source for the commands beside serve", "err", err)
	}
	return srv.ServeListeners(ctx, ls)
}
