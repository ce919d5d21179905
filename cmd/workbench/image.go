package main

import (
	"context"
	"flag"
	"fmt"
	"io"
	"log/slog"
	"os"

	"workbench/orchestrator/runtime"
)

// cmdImageLoad loads a `docker save` archive into the engine the portal
// uses (DOCKER_HOST or the local socket), for a server without registry
// access: `workbench image load cuda-notebook.tar` ("-" reads stdin).
func cmdImageLoad(ctx context.Context, args []string, stdin io.Reader, stdout, stderr io.Writer) error {
	fs := flag.NewFlagSet("image load", flag.ContinueOnError)
	fs.SetOutput(stderr)
	dataDir := dataDirFlag(fs)
	rest, err := parseInterspersed(fs, args)
	if err != nil {
		return err
	}
	if len(rest) != 1 {
		return fmt.Errorf("usage: workbench image load FILE (a `docker save` archive; - for stdin)")
	}
	in := stdin
	if rest[0] != "-" {
		f, err := os.Open(rest[0])
		if err != nil {
			return err
		}
		defer f.Close()
		// A directory opens, then fails mid-upload as if the engine were
		// down ("container engine unavailable … is a directory").
		if st, err := f.Stat(); err == nil && st.IsDir() {
			return fmt.Errorf("%s is a directory: give the file `docker save -o FILE IMAGE` wrote", rest[0])
		}
		in = f
	}
	d, err := runtime.NewDocker(runtime.WithLogger(slog.New(slog.NewTextHandler(stderr, &slog.HandlerOptions{Level: slog.LevelWarn}))))
	if err != nil {
		return fmt.Errorf("Docker client (DOCKER_HOST=%q): %w", os.Getenv("DOCKER_HOST"), err)
	}
	names, err := d.LoadImage(ctx, in)
	if err != nil {
		return err
	}
	for _, n := range names {
		fmt.Fprintln(stdout, "loaded", n)
	}
	// Audited in the portal's log, as an upload on the registries page
	// is; the engine loads without a portal, so a server without one
	// only says it was not recorded.
	store, err := openStore(ctx, *dataDir, stderr)
	if err != nil {
		fmt.Fprintf(stderr, "not recorded in the audit log: %v\n", err)
		return nil
	}
	defer store.Close()
	if err := store.Audit(ctx, "cli", "image.load", rest[0], nil, map[string]any{"images": names}); err != nil {
		fmt.Fprintf(stderr, "not recorded in the audit log: %v\n", err)
	}
	return nil
}
