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

	"workbench/orchestrator/simulate"
)

// cmdSimulate replays a demand trace against the production scheduler
// under each policy and prints the policy table (issue 12 §5;
// docs/scheduling.md "Simulator"). It touches no data directory.
func cmdSimulate(_ context.Context, args []string, stdout, stderr io.Writer) error {
	cfg := simulate.DefaultConfig()
	fs := flag.NewFlagSet("simulate", flag.ContinueOnError)
	fs.SetOutput(stderr)
	tracePath := fs.String("trace", "", "demand trace, CSV or JSON (see docs/scheduling.md)")
	synthetic := fs.Bool("synthetic", false, "use the synthetic lab day instead of --trace")
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
	var tr simulate.Trace
	switch {
	case *synthetic && *tracePath != "":
		return errors.New("simulate: give --trace FILE or --synthetic, not both")
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
		r, err := simulate.Run(tr, p, cfg)
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
