package main

import (
	"encoding/xml"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

func TestSimulateCommandPrintsTableAndWritesSVG(t *testing.T) {
	dir := t.TempDir()
	svg := filepath.Join(dir, "out.svg")
	trace := filepath.Join(dir, "trace.csv")
	out, _, err := runCLI(t, "", "simulate", "--synthetic", "--svg", svg, "--write-trace", trace)
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
	again, _, err := runCLI(t, "", "simulate", "--trace", trace)
	if err != nil {
		t.Fatal(err)
	}
	if again != out {
		t.Errorf("replaying the written trace gives another table:\n%s\nvs\n%s", again, out)
	}
	one, _, err := runCLI(t, "", "simulate", "--synthetic", "--gpus", "4", "--shared-gpus", "1", "--model", "A100", "--policies", "queue-fair")
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
		"both":        {[]string{"--synthetic", "--trace", bad}, "not both"},
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
