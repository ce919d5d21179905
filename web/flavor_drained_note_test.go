package web_test

import (
	"net/url"
	"strings"
	"testing"

	"github.com/PuerkitoBio/goquery"
)

// A flavor held back only by a drained GPU is not called impossible: the
// catalog and the launch form say the same true thing of it (its GPUs are
// drained or out of order now; it waits until they are back), the form
// leaves it selectable, and once the GPU is undrained neither says
// anything. In Chinese too.
func TestDrainedFlavorIsNotRuledOut(t *testing.T) {
	p := newPortal(t)
	admin := tokenFor(t, p, "admin", "admin")
	const h100 = "NVIDIA H100 80GB HBM3"
	if code, body := p.api("POST", "/api/v1/flavors", admin, `{"name":"all8","gpu_model":"`+h100+`","gpu_count":8,"cpu_cores":1,"memory_gib":8}`); code != 201 {
		t.Fatalf("8-GPU flavor: %d %v", code, body)
	}
	_, gpus := p.api("GET", "/api/v1/gpus", admin, "")
	uuid := gpus["items"].([]any)[0].(map[string]any)["uuid"].(string)
	drain := func(on bool) {
		t.Helper()
		body := `{"drained":false}`
		if on {
			body = `{"drained":true}`
		}
		if code, _ := p.api("PUT", "/api/v1/gpus/"+uuid+"/drain", admin, body); code != 200 {
			t.Fatalf("drain %v: %d", on, code)
		}
	}
	drain(true)
	tokenFor(t, p, "alice", "user")
	c := p.client()
	p.login(c, "alice", "alice-password")
	text := func(s *goquery.Selection) string { return strings.Join(strings.Fields(s.Text()), " ") }
	// notes reads the flavor's notes on the catalog and the launch form.
	type notes struct{ catNever, catWaits, formNever, formWaits string }
	read := func(name string) (n notes, disabled bool) {
		t.Helper()
		_, page := p.get(c, "/catalog")
		row := mpDoc(t, page).Find(`[data-testid=flavor-row]`).FilterFunction(func(_ int, s *goquery.Selection) bool {
			return strings.TrimSpace(s.Find(`td`).First().Text()) == name
		})
		if row.Length() != 1 {
			t.Fatalf("catalog rows of %s: %d, want 1", name, row.Length())
		}
		n.catNever, n.catWaits = text(row.Find(`[data-testid=flavor-unavailable]`)), text(row.Find(`[data-testid=flavor-waits]`))
		_, page = p.get(c, "/workbenches/new")
		card := mpDoc(t, page).Find(`[data-testid=flavor-choice]`).FilterFunction(func(_ int, s *goquery.Selection) bool {
			return s.Find(`input[value="`+name+`"]`).Length() == 1
		})
		if card.Length() != 1 {
			t.Fatalf("launch form cards of %s: %d, want 1", name, card.Length())
		}
		_, disabled = card.Find(`input[name=flavor]`).Attr("disabled")
		n.formNever, n.formWaits = text(card.Find(`[data-testid=flavor-unavailable]`)), text(card.Find(`[data-testid=flavor-waits]`))
		return n, disabled
	}

	const note = "needs 8 GPUs; only 7 are in service now, the others drained or out of order: it waits in the queue until they are back in service"
	if got, dis := read("all8"); got != (notes{catWaits: note, formWaits: note}) || dis {
		t.Errorf("8-GPU flavor, one GPU drained: %+v, disabled %v; want only %q on both pages", got, dis, note)
	}
	p.postForm(c, "/language", url.Values{"lang": {"zh-CN"}, "back": {"/"}})
	const zh = "需要 8 个 GPU；目前只有 7 个在服务中，其余已停止调度或故障：将在队列中等待，直到它们恢复服务"
	if got, dis := read("all8"); got != (notes{catWaits: zh, formWaits: zh}) || dis {
		t.Errorf("in Chinese: %+v, disabled %v; want only %q on both pages", got, dis, zh)
	}
	p.postForm(c, "/language", url.Values{"lang": {"en"}, "back": {"/"}})

	drain(false)
	if got, dis := read("all8"); got != (notes{}) || dis {
		t.Errorf("8-GPU flavor, all GPUs in service: %+v, disabled %v; want no note", got, dis)
	}
}
