package web_test

import (
	"context"
	"strings"
	"testing"

	"github.com/NVIDIA/go-nvml/pkg/nvml/mock/dgxh100"
	"github.com/PuerkitoBio/goquery"

	"workbench/handlers"
	"workbench/orchestrator/gpu"
	"workbench/web"
)

// A free GPU with a compute process the portal did not start reads "used
// outside Workbench" on /gpus (in the reader's language) and lists the
// process in the pool API; the other GPUs do not.
func TestGPUPageShowsUseOutsideThePortal(t *testing.T) {
	srv := dgxh100.New()
	load := gpu.AttachMockLoad(srv)
	load.Set(3, gpu.MockGPULoad{UtilPercent: 88, Processes: []gpu.Process{{PID: 4242, UsedMemMiB: 20480}, {PID: 4243, UsedMemMiB: 10240}}})
	p := newPortal(t, func(c *web.Config) { c.GPUOptions = []gpu.Option{gpu.WithNVML(srv, true, "mock:dgxh100")} })
	if err := p.srv.SampleGPUs(context.Background()); err != nil {
		t.Fatal(err)
	}
	token := tokenFor(t, p, "alice", "user")
	var gpus handlers.APIGPUList
	p.strictAPI("GET", "/api/v1/gpus", token, "", &gpus)
	for i, g := range gpus.Items {
		if i == 3 {
			if len(g.OutsideProcesses) != 2 || g.OutsideProcesses[0].PID != 4242 || g.OutsideProcesses[1].UsedMemMiB != 10240 {
				t.Errorf("GPU 3's outside processes %+v", g.OutsideProcesses)
			}
		} else if len(g.OutsideProcesses) != 0 {
			t.Errorf("GPU %d lists outside processes %+v", i, g.OutsideProcesses)
		}
	}

	c := p.client()
	p.login(c, "alice", "alice-password")
	page := func() *goquery.Document {
		_, body := p.get(c, "/gpus")
		return mpDoc(t, body)
	}
	notes := page().Find(`[data-testid=gpu-outside]`)
	if notes.Length() != 1 || strings.TrimSpace(notes.Text()) != "used outside Workbench: 2 processes, 30.0 GiB" ||
		!strings.Contains(notes.Closest(`[data-testid=gpu-row]`).Text(), "GPU 3 ·") {
		t.Fatalf("outside-use notes: %d %q", notes.Length(), notes.Text())
	}
	p.postForm(c, "/language", map[string][]string{"lang": {"zh-CN"}, "back": {"/gpus"}})
	if got := strings.TrimSpace(page().Find(`[data-testid=gpu-outside]`).Text()); got != "有 Workbench 之外的程序在使用：2 个进程, 30.0 GiB" {
		t.Errorf("Chinese outside-use note %q", got)
	}
}
