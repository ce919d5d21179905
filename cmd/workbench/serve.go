package main

import (
	"context"
	"flag"
	"io"

	"workbench/web"
)

func cmdServe(ctx context.Context, args []string, stdout, stderr io.Writer) error {
	var cfg web.Config
	fs := flag.NewFlagSet("serve", flag.ContinueOnError)
	fs.SetOutput(stderr)
	cfg.BindFlags(fs)
	if err := fs.Parse(args); err != nil {
		return err
	}
	if err := cfg.Validate(); err != nil {
		return err
	}
	log := web.NewLogger(stderr, cfg.LogFormat, cfg.LogLevel)
	srv, err := web.NewServer(ctx, cfg, log, stdout)
	if err != nil {
		return err
	}
	defer srv.Close()
	return srv.Run(ctx)
}
