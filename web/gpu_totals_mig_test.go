package web_test

import (
	"strings"
	"testing"

	"github.com/PuerkitoBio/goquery"

	"workbench/web"
)

// A GPU split into MIG instances is not counted among whole GPUs: on a
// pool of 7 whole H100s and one in two MIG instances, /gpus said "7 of 8
// free" and the home page "8 GPUs, 7 free", read as 8 whole GPUs. They now
// count the whole GPUs apart and name the split one with its instances,
// in English and Chinese.
func TestGPUTotalsCountASplitGPUApart(t *testing.T) {
	p := newPortal(t, func(c *web.Config) { c.MockMIG = "7:1g.10gb*2" }) // GPU 7 in two MIG instances
	tokenFor(t, p, "ada", "user")
	zh, en := p.readersSignedIn("ada", "ada-password")
	text := func(s *goquery.Selection) string { return strings.Join(strings.Fields(s.Text()), " ") }
	for lang, c := range map[string]struct {
		home, free, split, mig string
	}{
		"en":    {"7 whole GPUs, 7 free. 1 GPU split into 2 MIG instances: 2 free.", "Whole GPUs: 7 of 7 free", "1 GPU split into MIG instances", "MIG 1g.10gb: 2 of 2 free"},
		"zh-CN": {"整卡 GPU 共 7 块，7 块空闲。1 块 GPU 划分为 2 个 MIG 实例：2 个空闲。", "整卡 GPU：7 / 7 空闲", "1 块 GPU 划分为 MIG 实例", "MIG 1g.10gb：2 / 2 空闲"},
	} {
		client := en
		if lang == "zh-CN" {
			client = zh
		}
		_, body := p.get(client, "/")
		if got := text(mpDoc(t, body).Find(`[data-testid=gpu-summary]`)); got != c.home {
			t.Errorf("%s home page: %q, want %q", lang, got, c.home)
		}
		_, body = p.get(client, "/gpus")
		card := mpDoc(t, body).Find(`[data-testid=gpu-model]`)
		if card.Length() != 1 {
			t.Fatalf("%s: %d model cards on /gpus, want 1", lang, card.Length())
		}
		if got := text(card.Find(`[data-testid=gpu-model-free]`)); got != c.free {
			t.Errorf("%s /gpus, whole GPUs: %q, want %q", lang, got, c.free)
		}
		if got := text(card.Find(`[data-testid=gpu-model-split][data-kind=mig]`)); got != c.split {
			t.Errorf("%s /gpus, split GPUs: %q, want %q", lang, got, c.split)
		}
		if got := text(card.Find(`[data-testid=gpu-model-units][data-kind=mig]`)); got != c.mig {
			t.Errorf("%s /gpus, MIG instances: %q, want %q", lang, got, c.mig)
		}
	}
}
