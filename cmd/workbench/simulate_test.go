package main

import (
	"context"
	"encoding/xml"
	"io"
	"log/slog"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"workbench/models"
)

func TestSimulateCommandPrintsTableAndWritesSVG(t *testing.T) {
	dir := t.TempDir()
	svg := filepath.Join(dir, "out.svg")
	trace := filepath.Join(dir, "trace.csv")
	// The pure scheduler engine (fast); the portal engine is tested below
	// and in orchestrator/simulate.
	out, _, err := runCLI(t, "", "simulate", "--engine", "scheduler", "--synthetic", "--svg", svg, "--write-trace", trace)
	if err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{"exclusive-reject", "queue-fifo", "queue-fair", "fair+preempt+sharing", "interactive wait p50/p95", "cost per user", "8 × H100"} {
		if !strings.Contains(out, want) {
			t.Errorf("output lacks %q:\n%s", want, out)
		}
	}
	data, err := os.ReadFile(svg)
	if err != nil {
		t.Fatal(err)
	}
	var doc struct {
		XMLName xml.Name
		Rects   []struct{} `xml:"rect"`
	}
	if err := xml.Unmarshal(data, &doc); err != nil || doc.XMLName.Local != "svg" || len(doc.Rects) < 8 {
		t.Fatalf("SVG: %v, root %q, %d rects", err, doc.XMLName.Local, len(doc.Rects))
	}
	// The written trace replays to the same table.
	again, _, err := runCLI(t, "", "simulate", "--engine", "scheduler", "--trace", trace)
	if err != nil {
		t.Fatal(err)
	}
	if again != out {
		t.Errorf("replaying the written trace gives another table:\n%s\nvs\n%s", again, out)
	}
	one, _, err := runCLI(t, "", "simulate", "--engine", "scheduler", "--synthetic", "--gpus", "4", "--shared-gpus", "1", "--model", "A100", "--policies", "queue-fair")
	if err != nil || !strings.Contains(one, "4 × A100") || strings.Contains(one, "queue-fifo") {
		t.Errorf("--gpus/--model/--policies: %v\n%s", err, one)
	}
}

func TestSimulateCommandBadInput(t *testing.T) {
	dir := t.TempDir()
	bad := filepath.Join(dir, "bad.csv")
	if err := os.WriteFile(bad, []byte("arrival_s,user,gpus,duration_s,priority,preemptible,checkpoint_s\n0,u,2.5,60,batch,false,0\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	cases := map[string]struct {
		args []string
		want string
	}{
		"nothing":     {nil, "--trace FILE or --synthetic"},
		"both":        {[]string{"--synthetic", "--trace", bad}, "not several"},
		"engine":      {[]string{"--synthetic", "--engine", "magic"}, "--engine is portal or scheduler"},
		"mig pure":    {[]string{"--synthetic", "--engine", "scheduler", "--mig", "0:3g.40gb"}, "need --engine portal"},
		"mig":         {[]string{"--synthetic", "--mig", "0:9g.1gb"}, "--mig"},
		"reserve":     {[]string{"--synthetic", "--reserve", "u1,gpu,0,0,60"}, "--reserve"},
		"days":        {[]string{"--from-ledger", "--days", "0"}, "--days"},
		"two pols":    {[]string{"--synthetic", "--policy", "queue-fair", "--policies", "queue-fifo"}, "not both"},
		"missing":     {[]string{"--trace", filepath.Join(dir, "nope.csv")}, "no such file"},
		"bad trace":   {[]string{"--trace", bad}, "bad.csv: trace CSV line 2: gpus: 2.5"},
		"policy":      {[]string{"--synthetic", "--policies", "lottery"}, `unknown policy "lottery"`},
		"gpus":        {[]string{"--synthetic", "--gpus", "0"}, "--gpus must be at least 1"},
		"extra arg":   {[]string{"--synthetic", "now"}, "unexpected argument"},
		"shared gpus": {[]string{"--synthetic", "--gpus", "2", "--shared-gpus", "2"}, "--shared-gpus"},
	}
	for name, c := range cases {
		t.Run(name, func(t *testing.T) {
			_, _, err := runCLI(t, "", append([]string{"simulate"}, c.args...)...)
			if err == nil || !strings.Contains(err.Error(), c.want) {
				t.Fatalf("got %v, want %q", err, c.want)
			}
		})
	}
}

// The portal engine (the default): a small trace replayed against the real
// Manager and queue with a GPU split into MIG instances, a booking and a
// maximum wait, printed in the same table format.
func TestSimulateCommandPortalEngine(t *testing.T) {
	dir := t.TempDir()
	trace := filepath.Join(dir, "t.csv")
	if err := os.WriteFile(trace, []byte("arrival_s,user,gpus,duration_s,priority,preemptible,checkpoint_s\n"+
		"0,u1,0.4,3600,interactive,false,0\n0,u2,0.4,3600,interactive,false,0\n0,u3,1,7200,preemptible,true,600\n"+
		"60,u4,1,3600,interactive,false,0\n120,u5,4,3600,batch,false,0\n7300,u6,0.4,3600,interactive,false,0\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	out, _, err := runCLI(t, "", "simulate", "--trace", trace, "--gpus", "2", "--shared-gpus", "0", "--mig", "0:3g.40gb",
		"--max-wait", "90m", "--reserve", "u6,mig:3g.40gb,1,7200,9000", "--policy", "fair+preempt+sharing")
	if err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{"2 × H100, 6 jobs", "fair+preempt+sharing", "interactive wait p50/p95", "cost per user"} {
		if !strings.Contains(out, want) {
			t.Errorf("output lacks %q:\n%s", want, out)
		}
	}
	if strings.Contains(out, "queue-fifo") {
		t.Errorf("--policy printed other policies:\n%s", out)
	}
	// u5's 4 GPUs never fit the one whole GPU: expired after 90 min
	// (rejected 1); u3 yields to u4 (preempted 1).
	for _, line := range strings.Split(out, "\n") {
		if strings.Contains(line, "fair+preempt+sharing") && !strings.Contains(strings.Join(strings.Fields(line), " "), "fair+preempt+sharing") {
			t.Errorf("line %q", line)
		}
		if f := strings.Fields(line); len(f) > 5 && f[0] == "fair+preempt+sharing" && (f[3] != "1" || f[4] != "1") {
			t.Errorf("rejected %s preempted %s, want 1 and 1:\n%s", f[3], f[4], out)
		}
	}
}

// `workbench simulate --from-ledger --days 30 --policy X` replays the
// metered GPU runs of a data directory's SQLite file: two runs in the last
// days, one older (left out), printed as the policy table.
func TestSimulateCommandFromLedger(t *testing.T) {
	dir := t.TempDir()
	ctx := context.Background()
	s, err := models.Open(ctx, dir, slog.New(slog.NewTextHandler(io.Discard, nil)))
	if err != nil {
		t.Fatal(err)
	}
	img := &models.Image{Name: "img", Image: "img:1", StartCommand: "jupyter lab --port={port} --ServerApp.base_url={base_url} --IdentityProvider.token={token}",
		RunAsUser: "1000", HomePath: "/home/jovyan", Enabled: true}
	fl := &models.Flavor{Name: "one", GPUModel: "NVIDIA H100 80GB HBM3", GPUCount: 1, CPUMilli: 1000, MemoryMiB: 1024, Enabled: true}
	u, err := s.CreateUser(ctx, models.NewUser{Username: "ada", Password: "ada-password-1", Role: "user"})
	if err != nil || s.CreateImage(ctx, img) != nil || s.CreateFlavor(ctx, fl) != nil {
		t.Fatalf("seed: %v", err)
	}
	now := time.Now().UTC().Truncate(time.Second)
	for i, start := range []time.Time{now.AddDate(0, 0, -3), now.AddDate(0, 0, -2), now.AddDate(0, 0, -40)} {
		wb := &models.Workbench{Name: "w" + itoa(int64(i)), OwnerID: u.ID, ImageID: img.ID, FlavorID: fl.ID, Token: "t"}
		if err := s.EnqueueWorkbench(ctx, wb, nil); err != nil {
			t.Fatal(err)
		}
		iv := &models.UsageInterval{WorkbenchID: wb.ID, UserID: u.ID, GPUModel: fl.GPUModel, GPUCount: 1, UnitKind: models.UnitGPU,
			CPUMilli: 1000, MemoryMiB: 1024, StartedAt: start}
		if err := s.OpenInterval(ctx, iv); err != nil {
			t.Fatal(err)
		}
		if err := s.CloseInterval(ctx, wb.ID, start.Add(time.Hour), "stopped"); err != nil {
			t.Fatal(err)
		}
	}
	s.Close()
	out, _, err := runCLI(t, "", "simulate", "--from-ledger", "--days", "30", "--data-dir", dir, "--policy", "queue-fair", "--gpus", "2", "--shared-gpus", "0")
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(out, "2 × H100 80GB HBM3, 2 jobs") || !strings.Contains(out, "queue-fair") || !strings.Contains(out, "ada") {
		t.Fatalf("replay:\n%s", out)
	}
	if _, _, err := runCLI(t, "", "simulate", "--from-ledger", "--days", "1", "--data-dir", dir); err == nil || !strings.Contains(err.Error(), "no GPU runs") {
		t.Fatalf("a day without runs: %v", err)
	}
}
