package main

import (
	"context"
	"flag"
	"fmt"
	"io"

	"workbench/web"
)

func cmdServe(ctx context.Context, args []string, stdout, stderr io.Writer) error {
	var cfg web.Config
	fs := flag.NewFlagSet("serve", flag.ContinueOnError)
	fs.SetOutput(stderr)
	cfg.BindFlags(fs)
	newIdentity := fs.Bool("new-identity", false, "give this data a new install id first: for a copy of an install (a restored backup) run beside the original")
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
	if *newIdentity {
		store, err := openStoreAs(ctx, cfg.DataDir, stderr) // serve migrates next
		if err != nil {
			return err
		}
		id, err := store.NewInstallID(ctx)
		store.Close()
		if err != nil {
			return err
		}
		fmt.Fprintf(stderr, "this data now has its own install id %s: it manages only the containers it launches from now on\n", id)
	}
	// Every address is bound first: a port in use must stop the start
	// before the first admin's one-time password is printed (and used
	// up) and before any background work begins.
	ls, err := web.ListenAll(cfg)
	if err != nil {
		return err
	}
	log := web.NewLogger(stderr, cfg.LogFormat, cfg.LogLevel)
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
