package web_test

import (
	"context"
	"strings"
	"testing"

	"github.com/NVIDIA/go-nvml/pkg/nvml/mock/dgxh100"
	"github.com/PuerkitoBio/goquery"

	"workbench/orchestrator/gpu"
	"workbench/web"
)

// /gpus tells a GPU at 0% from one that could not be read.
func TestGPUPageTellsZeroFromUnread(t *testing.T) {
	srv := dgxh100.New()
	load := gpu.AttachMockLoad(srv)
	load.Set(2, gpu.MockGPULoad{Fail: true})
	load.Set(5, gpu.MockGPULoad{UtilPercent: 73})
	p := newPortal(t, func(c *web.Config) { c.GPUOptions = []gpu.Option{gpu.WithNVML(srv, true, "mock:dgxh100")} })
	if err := p.srv.SampleGPUs(context.Background()); err != nil {
		t.Fatal(err)
	}
	tokenFor(t, p, "alice", "user")
	ac := p.client()
	p.login(ac, "alice", "alice-password")
	_, body := p.get(ac, "/gpus")
	doc, err := goquery.NewDocumentFromReader(strings.NewReader(body))
	if err != nil {
		t.Fatal(err)
	}
	cells := doc.Find("td.util")
	if cells.Length() != 8 {
		t.Fatalf("%d utilisation cells, want 8", cells.Length())
	}
	want := map[int]string{0: "0%", 2: "could not read", 5: "73%"}
	for i, w := range want {
		if got := strings.TrimSpace(cells.Eq(i).Text()); got != w {
			t.Errorf("GPU %d utilisation %q, want %q", i, got, w)
		}
	}
}
