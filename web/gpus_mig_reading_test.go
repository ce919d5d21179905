package web_test

import (
	"strings"
	"testing"

	"github.com/PuerkitoBio/goquery"

	"workbench/handlers"
)

// A MIG-enabled GPU answers NOT_SUPPORTED for whole-GPU utilisation but
// still reports its memory, temperature and power: the pool API gives
// those (utilisation null, not 0 and not the whole reading dropped) and
// the GPUs page shows them, with utilisation "per instance (MIG)" rather
// than "could not read". A whole GPU keeps all four.
func TestMIGGPUShowsWhatItReports(t *testing.T) {
	p, _, _, _, token := migWorkbenchPortal(t)
	var gpus handlers.APIGPUList
	p.strictAPI("GET", "/api/v1/gpus", token, "", &gpus)
	g0, g7 := gpus.Items[0], gpus.Items[7]
	if !g7.MIGEnabled {
		t.Fatalf("GPU 7 is not in MIG mode: %+v", g7)
	}
	r := g7.Utilization
	if r == nil || r.UtilPercent != nil || r.TempC == nil || r.PowerW == nil || r.MemUsedMiB == nil {
		t.Fatalf("GPU 7's reading %+v: want utilisation null and memory, temperature and power read", r)
	}
	if r0 := g0.Utilization; r0 == nil || r0.UtilPercent == nil || r0.TempC == nil || r0.PowerW == nil || r0.MemUsedMiB == nil {
		t.Fatalf("GPU 0's reading %+v: want every field", r0)
	}

	c := p.client()
	p.login(c, "alice", "alice-password")
	_, page := p.get(c, "/gpus")
	doc := mpDoc(t, page)
	row := doc.Find(`[data-testid=gpu-row]`).FilterFunction(func(_ int, s *goquery.Selection) bool {
		return strings.Contains(s.Text(), "GPU 7 ·")
	})
	if row.Length() != 1 {
		t.Fatalf("%d rows for GPU 7", row.Length())
	}
	text := strings.Join(strings.Fields(row.Text()), " ")
	if row.Find(`[data-testid=gpu-util-mig]`).Length() != 1 || row.Find(`[data-testid=gpu-util-unread]`).Length() != 0 {
		t.Errorf("GPU 7's utilisation does not say it is read per instance: %q", text)
	}
	if !strings.Contains(text, " °C") || !strings.Contains(text, " W") {
		t.Errorf("GPU 7's row lacks its temperature or power: %q", text)
	}
}
