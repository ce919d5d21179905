package main

import (
	"bytes"
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"strings"
	"time"

	"workbench/orchestrator/simulate"
)

// cmdSimulate replays a demand trace under each policy and prints the
// policy table (issue 12 §5; docs/scheduling.md "Simulator"): by default
// against the portal itself (the real Manager, queue and metering on a
// temporary SQLite file, the in-memory runtime, a simulated clock), or
// with --engine scheduler against the pure scheduler alone (fast). The
// trace is a file, the synthetic lab day, or the last --days of real usage
// read from a data directory (--from-ledger; read only).
func cmdSimulate(ctx context.Context, args []string, stdout, stderr io.Writer) error {
	cfg := simulate.DefaultConfig()
	fs := flag.NewFlagSet("simulate", flag.ContinueOnError)
	fs.SetOutput(stderr)
	tracePath := fs.String("trace", "", "demand trace, CSV or JSON (see docs/scheduling.md)")
	synthetic := fs.Bool("synthetic", false, "use the synthetic lab day instead of --trace")
	fromLedger := fs.Bool("from-ledger", false, "replay the real usage of the last --days from --data-dir")
	days := fs.Int("days", 30, "with --from-ledger: how many days back")
	dataDir := dataDirFlag(fs)
	engine := fs.String("engine", "portal", "portal (the real Manager and queue, slower) or scheduler (the pure scheduler only)")
	policy := fs.String("policy", "", "one policy (same as --policies with one name)")
	var migSpecs []string
	fs.Func("mig", "GPU:PROFILE partitions a GPU into MIG instances of PROFILE (repeatable; portal engine), e.g. 0:3g.40gb", func(v string) error {
		migSpecs = append(migSpecs, v)
		return nil
	})
	fs.Func("reserve", "USER,KIND,UNITS,START_S,END_S books units for USER before the trace starts (repeatable; portal engine)", func(v string) error {
		b, err := simulate.ParseBooking(v)
		if err == nil {
			cfg.Bookings = append(cfg.Bookings, b)
		}
		return err
	})
	fs.DurationVar(&cfg.MaxWait, "max-wait", 0, "maximum wait in the queue before a request expires (portal engine; 0: none)")
	seed := fs.Uint64("seed", 1, "seed of the synthetic trace")
	writeTrace := fs.String("write-trace", "", "also write the trace used as CSV to this file")
	svgPath := fs.String("svg", "", "write an SVG bar chart of the policies to this file")
	policies := fs.String("policies", "", "comma-separated policies (default: all)")
	fs.IntVar(&cfg.GPUs, "gpus", cfg.GPUs, "GPUs in the simulated server")
	fs.StringVar(&cfg.Model, "model", cfg.Model, "GPU model (a label)")
	fs.IntVar(&cfg.SharedGPUs, "shared-gpus", cfg.SharedGPUs, "GPUs marked shared under fair+preempt+sharing")
	fs.IntVar(&cfg.SlicesPerGPU, "slices", cfg.SlicesPerGPU, "slices per shared GPU")
	fs.DurationVar(&cfg.Grace, "preempt-grace", cfg.Grace, "grace before a preempted run stops")
	fs.DurationVar(&cfg.HalfLife, "fair-share-half-life", cfg.HalfLife, "half-life of the fair-share usage")
	fs.DurationVar(&cfg.Window, "window", 0, "utilisation window from the trace start (default: last arrival plus its duration)")
	fs.Int64Var(&cfg.RatePerGPUHour, "rate-micro", cfg.RatePerGPUHour, "flat price per GPU-hour in micro-units")
	if err := fs.Parse(args); err != nil {
		return err
	}
	if fs.NArg() > 0 {
		return fmt.Errorf("simulate: unexpected argument %q", fs.Arg(0))
	}
	if *engine != "portal" && *engine != "scheduler" {
		return fmt.Errorf("simulate: --engine is portal or scheduler, not %q", *engine)
	}
	mig, err := simulate.ParseMIG(migSpecs)
	if err != nil {
		return fmt.Errorf("simulate: %w", err)
	}
	cfg.MIG = mig
	if *engine == "scheduler" && (len(cfg.MIG) > 0 || len(cfg.Bookings) > 0 || cfg.MaxWait > 0) {
		return errors.New("simulate: --mig, --reserve and --max-wait need --engine portal")
	}
	var tr simulate.Trace
	sources := 0
	for _, on := range []bool{*synthetic, *tracePath != "", *fromLedger} {
		if on {
			sources++
		}
	}
	switch {
	case sources > 1:
		return errors.New("simulate: give --trace FILE, --synthetic or --from-ledger, not several")
	case *fromLedger:
		if *days < 1 || *days > 366 {
			return errors.New("simulate: --days must be between 1 and 366")
		}
		store, err := openStore(ctx, *dataDir, stderr)
		if err != nil {
			return err
		}
		defer store.Close()
		until := time.Now().UTC()
		modelSet := false
		fs.Visit(func(f *flag.Flag) { modelSet = modelSet || f.Name == "model" })
		want := ""
		if modelSet {
			want = cfg.Model
		}
		var model string
		tr, model, err = simulate.LedgerTrace(ctx, store, until.AddDate(0, 0, -*days), until, want, cfg.SlicesPerGPU)
		if err != nil {
			return fmt.Errorf("simulate --from-ledger: %w", err)
		}
		cfg.Model = strings.TrimPrefix(model, "NVIDIA ")
	case *synthetic:
		tr = simulate.Synthetic(*seed)
	case *tracePath != "":
		f, err := os.Open(*tracePath)
		if err != nil {
			return fmt.Errorf("simulate: %w", err)
		}
		defer f.Close()
		if tr, err = simulate.ParseTrace(f); err != nil {
			return fmt.Errorf("simulate: %s: %w", *tracePath, err)
		}
	default:
		return errors.New("simulate: give --trace FILE or --synthetic")
	}
	pols := simulate.Policies
	if *policy != "" {
		if *policies != "" {
			return errors.New("simulate: give --policy or --policies, not both")
		}
		*policies = *policy
	}
	if *policies != "" {
		pols = nil
		for _, s := range strings.Split(*policies, ",") {
			p, err := simulate.ParsePolicy(strings.TrimSpace(s))
			if err != nil {
				return fmt.Errorf("simulate: %w", err)
			}
			pols = append(pols, p)
		}
	}
	var results []*simulate.Result
	for _, p := range pols {
		var r *simulate.Result
		var err error
		if *engine == "portal" {
			r, err = simulate.RunPortal(ctx, tr, p, cfg)
		} else {
			r, err = simulate.Run(tr, p, cfg)
		}
		if err != nil {
			return fmt.Errorf("simulate %s: %w", p, err)
		}
		results = append(results, r)
	}
	if *writeTrace != "" {
		var b bytes.Buffer
		if err := simulate.WriteCSV(&b, tr); err != nil {
			return err
		}
		if err := os.WriteFile(*writeTrace, b.Bytes(), 0o644); err != nil {
			return fmt.Errorf("simulate: %w", err)
		}
	}
	if *svgPath != "" {
		var b bytes.Buffer
		if err := simulate.WriteSVG(&b, results); err != nil {
			return err
		}
		if err := os.WriteFile(*svgPath, b.Bytes(), 0o644); err != nil {
			return fmt.Errorf("simulate: %w", err)
		}
	}
	return simulate.WriteTable(stdout, results)
}
