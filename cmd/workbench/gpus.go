package main

import (
	"context"
	"encoding/json"
	"flag"
	"fmt"
	"io"
	"log/slog"
	"text/tabwriter"

	"workbench/orchestrator"
	"workbench/orchestrator/gpu"
	"workbench/web"
)

// cmdGPUs prints the GPU inventory with the pool state from the data
// directory (drained GPUs): the same items as GET /api/v1/gpus.
func cmdGPUs(ctx context.Context, args []string, stdout, stderr io.Writer) error {
	var cfg web.Config
	fs := flag.NewFlagSet("gpus", flag.ContinueOnError)
	fs.SetOutput(stderr)
	cfg.BindFlags(fs)
	asJSON := fs.Bool("json", false, "print JSON")
	if err := fs.Parse(args); err != nil {
		return err
	}
	if err := cfg.Validate(); err != nil {
		return err
	}
	log := slog.New(slog.NewTextHandler(stderr, &slog.HandlerOptions{Level: slog.LevelWarn}))
	opts, err := web.InventoryOptions(cfg)
	if err != nil {
		return err
	}
	inv, err := gpu.New(cfg.GPUMode(), append([]gpu.Option{gpu.WithLogger(log)}, opts...)...)
	if err != nil {
		return err
	}
	defer inv.Close()
	store, err := openStore(ctx, cfg.DataDir, stderr)
	if err != nil {
		return err
	}
	defer store.Close()
	sampler := gpu.NewSampler(inv, cfg.SampleEvery, 1, log)
	if err := sampler.Collect(ctx); err != nil {
		log.Warn("GPU sample", "err", err)
	}
	pool := orchestrator.NewPool(inv, sampler, store)
	gpus, err := pool.List(ctx)
	if err != nil {
		return err
	}
	if *asJSON {
		enc := json.NewEncoder(stdout)
		enc.SetIndent("", "  ")
		if gpus == nil {
			gpus = []orchestrator.PoolGPU{}
		}
		return enc.Encode(map[string]any{"items": gpus, "simulated": inv.Simulated(), "backend": inv.Backend(), "status": inv.Status()})
	}
	fmt.Fprintln(stdout, inv.Status())
	tw := tabwriter.NewWriter(stdout, 0, 4, 2, ' ', 0)
	fmt.Fprintln(tw, "INDEX\tMODEL\tMEMORY\tSTATE\tHEALTH\tUUID")
	for _, g := range gpus {
		fmt.Fprintf(tw, "%d\t%s\t%d MiB\t%s\t%s\t%s\n", g.Index, g.Model, g.MemoryMiB, g.State, g.Health, g.UUID)
		held := map[string]string{}
		for _, u := range g.Units {
			if u.Kind == "mig" {
				held[u.UUID] = u.WorkbenchID
			}
		}
		for _, m := range g.MIG {
			fmt.Fprintf(tw, "\t  MIG %s\t%d MiB\t%s\t\t%s\n", m.Profile, m.MemoryMiB, holderText(held[m.UUID]), m.UUID)
		}
		for _, u := range g.Units {
			if u.Kind == "slice" {
				fmt.Fprintf(tw, "\t  slice %d (shared — no memory isolation)\t\t%s\t\t%s\n", *u.Slice, holderText(u.WorkbenchID), u.UUID)
			}
		}
	}
	return tw.Flush()
}

// holderText is a unit's state for the table: free, or its workbench.
func holderText(wb string) string {
	if wb == "" {
		return "free"
	}
	return "held by " + wb
}
