package main

import (
	"context"
	"encoding/json"
	"flag"
	"fmt"
	"io"
	"log/slog"
	"slices"
	"text/tabwriter"
	"time"

	"workbench/handlers"
	"workbench/models"
	"workbench/models/pricing"
	"workbench/orchestrator"
	"workbench/orchestrator/gpu"
	"workbench/web"
)

// cmdGPUs prints the GPU inventory with the pool state from the data
// directory (drained GPUs): the same items as GET /api/v1/gpus. With
// --utilisation it prints the utilisation, idle cost and energy of the
// rolled-up telemetry instead (GET /api/v1/admin/utilisation).
func cmdGPUs(ctx context.Context, args []string, stdout, stderr io.Writer) error {
	var cfg web.Config
	fs := flag.NewFlagSet("gpus", flag.ContinueOnError)
	fs.SetOutput(stderr)
	bindServeFlags(fs, &cfg, "data-dir", "gpus", "mock-mig", "gpu-demo-load", "currency", "gpu-idle-threshold")
	asJSON := fs.Bool("json", false, "print JSON")
	util := fs.Bool("utilisation", false, "print utilisation, idle cost and energy per GPU, unit, model, user and group")
	bucket := fs.String("bucket", "day", "with --utilisation: day, week or month")
	days := fs.Int("days", 30, "with --utilisation: the last N days (UTC, today included)")
	pos, err := parseInterspersed(fs, args)
	if err != nil {
		return err
	}
	if err := noArguments("gpus", pos); err != nil {
		return err
	}
	if err := cfg.Validate(); err != nil {
		return err
	}
	// Flags first: a mistyped flag costs no inventory scan.
	if *util {
		if err := checkUtilFlags(*bucket, *days); err != nil {
			return err
		}
	}
	log := slog.New(slog.NewTextHandler(stderr, &slog.HandlerOptions{Level: slog.LevelWarn}))
	store, err := openStore(ctx, cfg.DataDir, stderr)
	if err != nil {
		return err
	}
	defer store.Close()
	if _, err := useServeGPUSource(ctx, store, fs, &cfg); err != nil {
		return err
	}
	opts, err := web.InventoryOptions(cfg)
	if err != nil {
		return err
	}
	inv, err := gpu.New(cfg.GPUMode(), append([]gpu.Option{gpu.WithLogger(log)}, opts...)...)
	if err != nil {
		return err
	}
	defer inv.Close()
	sampler := gpu.NewSampler(inv, cfg.SampleEvery, 1, log)
	if err := sampler.Collect(ctx); err != nil {
		log.Warn("GPU sample", "err", err)
	}
	pool := orchestrator.NewPool(inv, sampler, store)
	if *util {
		return printUtilisation(ctx, stdout, store, pool, cfg, *bucket, *days, *asJSON)
	}
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
	holder := holderLabels(ctx, store)
	tw := tabwriter.NewWriter(stdout, 0, 4, 2, ' ', 0)
	fmt.Fprintln(tw, "INDEX\tMODEL\tMEMORY\tSTATE\tUTIL\tHEALTH\tHOLDER\tUUID")
	for _, g := range gpus {
		fmt.Fprintf(tw, "%d\t%s\t%d MiB\t%s\t%s\t%s\t%s\t%s\n", g.Index, g.Model, g.MemoryMiB, gpuStateText(g), utilText(g.Util), g.Health, holder(g.WorkbenchID), g.UUID)
		held := map[string]string{}
		for _, u := range g.Units {
			if u.Kind == "mig" {
				held[u.UUID] = u.WorkbenchID
			}
		}
		for _, m := range g.MIG {
			fmt.Fprintf(tw, "\t  MIG %s\t%d MiB\t%s\t\t\t%s\t%s\n", m.Profile, m.MemoryMiB, holderText(held[m.UUID]), holder(held[m.UUID]), m.UUID)
		}
		for _, u := range g.Units {
			if u.Kind == "slice" {
				fmt.Fprintf(tw, "\t  slice %d (shared — no memory isolation)\t\t%s\t\t\t%s\t%s\n", *u.Slice, holderText(u.WorkbenchID), holder(u.WorkbenchID), u.UUID)
			}
		}
	}
	return tw.Flush()
}

// utilText is a GPU's last utilisation reading for the table ("—" when
// it gave none).
func utilText(r *orchestrator.Reading) string {
	if r == nil || r.UtilPercent == nil {
		return "—"
	}
	return fmt.Sprintf("%d%%", *r.UtilPercent)
}

// holderLabels returns a function naming the workbench wbID for the
// table: owner/name (id), so an admin at the server's console sees whose
// work holds a GPU without a second lookup ("" when free; the id alone
// when no active workbench has it). One query for the whole table: the
// active workbenches, their owners' names joined in SQL.
func holderLabels(ctx context.Context, store *models.Store) func(wbID string) string {
	names := map[string]string{}
	if wbs, err := store.ListWorkbenches(ctx, 0, models.ActiveStates...); err == nil {
		for _, wb := range wbs {
			names[wb.ID] = fmt.Sprintf("%s/%s (%s)", wb.OwnerName, wb.Name, wb.ID)
		}
	}
	return func(wbID string) string {
		if wbID == "" {
			return ""
		}
		if n, ok := names[wbID]; ok {
			return n
		}
		return wbID
	}
}

// checkUtilFlags refuses a --bucket or --days that --utilisation cannot use.
func checkUtilFlags(bucket string, days int) error {
	if !slices.Contains(orchestrator.UtilBuckets, bucket) {
		return fmt.Errorf("--bucket must be day, week or month")
	}
	if days < 1 || days > 400 {
		return fmt.Errorf("--days must be 1–400")
	}
	return nil
}

// printUtilisation reports the last days days by bucket, as the admin
// dashboard's JSON or as tables.
func printUtilisation(ctx context.Context, stdout io.Writer, store *models.Store, pool *orchestrator.Pool, cfg web.Config,
	bucket string, days int, asJSON bool) error {
	to := orchestrator.BucketStart(time.Now(), "day").AddDate(0, 0, 1)
	from := to.AddDate(0, 0, -days)
	rep, err := orchestrator.BuildUtilisation(ctx, store, pool, from, to, bucket, 0, uint32(cfg.GPUIdlePercent))
	if err != nil {
		return err
	}
	var price *int64
	if p, set, err := store.ElectricityPrice(ctx); err == nil && set {
		price = &p
	}
	out := handlers.UtilisationJSON(rep, cfg.Currency, price)
	if asJSON {
		enc := json.NewEncoder(stdout)
		enc.SetIndent("", "  ")
		return enc.Encode(out)
	}
	fmt.Fprintf(stdout, "GPU utilisation %s – %s (UTC), idle below %d%%; costs in %s, reported, never charged\n",
		from.Format("2006-01-02"), to.Format("2006-01-02"), rep.IdleThresholdPercent, cfg.Currency)
	tw := tabwriter.NewWriter(stdout, 0, 4, 2, ' ', 0)
	fmt.Fprintln(tw, "ROW\tKEY\tAVAILABLE h\tHELD h\tBUSY h\tHELD <THRESHOLD h\tIDLE COST\tENERGY kWh")
	line := func(kind string, r handlers.APIUtilRow) {
		energy := "n/a"
		if r.EnergyMJ != nil {
			energy = pricing.FormatKWh(*r.EnergyMJ)
		}
		fmt.Fprintf(tw, "%s\t%s\t%.1f\t%.1f\t%.1f\t%.1f\t%s\t%s\n", kind, r.Key, r.AvailableHours, r.AllocatedHours, r.BusyHours,
			r.HeldBelowThresholdHours, pricing.Format(r.UnheldCostMicros+r.HeldIdleCostMicros), energy)
	}
	line("total", out.Total)
	for _, r := range out.ByGPU {
		line("gpu", r)
	}
	for _, r := range out.ByUnit {
		r.Key = r.Kind + " " + r.UnitUUID
		if r.Holder != "" {
			r.Key += " (" + r.Holder + ")"
		}
		line("unit", r.APIUtilRow)
	}
	for _, r := range out.ByModel {
		line("model", r)
	}
	for _, r := range out.ByUser {
		line("user", r)
	}
	for _, r := range out.ByGroup {
		if r.Key == "" { // users in no group, as the page says
			r.Key = "(no group)"
		}
		line("group", r)
	}
	return tw.Flush()
}

// holderText is a unit's state for the table: free, or held (the HOLDER
// column says by whose workbench).
func holderText(wb string) string {
	if wb == "" {
		return "free"
	}
	return "held"
}

// gpuStateText is a GPU's state for the table: a drained GPU still in use
// (or unhealthy, or in MIG mode) says it is drained too, as the JSON's
// "drained" does; it read a plain "in_use".
func gpuStateText(g orchestrator.PoolGPU) string {
	if g.Drained && g.State != orchestrator.GPUDrained {
		return g.State + ", drained"
	}
	return g.State
}
