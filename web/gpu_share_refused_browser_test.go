package web_test

import (
	"context"
	"net/http"
	"net/url"
	"strings"
	"testing"

	"github.com/chromedp/chromedp"

	"workbench/models"
)

// An admin asks to share a GPU that a workbench holds whole: the GPU page
// comes back with that GPU's Share… form open, the numbers they typed still
// in it and the reason above them; a number out of range is named beside
// its field. Nothing is shared. With JavaScript on and off: the form is a
// plain form in a <details> the page opens itself.
func TestBrowserRefusedShareKeepsTheForm(t *testing.T) {
	for _, js := range []bool{true, false} {
		t.Run(map[bool]string{true: "js-on", false: "js-off"}[js], func(t *testing.T) { refusedShare(t, js) })
	}
}

func refusedShare(t *testing.T, js bool) {
	p := newPortal(t)
	ctx := btNewBrowser(t) // closed before the portal
	if !js {
		btDo(t, ctx, "disable JavaScript", btScriptsOff())
	}
	admin := tokenFor(t, p, "root2", "admin")
	_, gpus := p.api("GET", "/api/v1/gpus", admin, "")
	g := gpus["items"].([]any)[4].(map[string]any)
	uuid, model := g["uuid"].(string), g["model"].(string)
	owner, err := p.srv.Store.UserByUsername(context.Background(), "root2")
	if err != nil {
		t.Fatal(err)
	}
	p.runningRecord(owner, "busy", models.GPUNeed{Model: model, Count: 1, Candidates: []string{uuid}})

	btLoginAsAdmin(t, ctx, p.ts.URL)
	btNavigate(t, ctx, p.ts.URL+"/gpus")
	row := `[data-testid=gpu-row][data-uuid="` + uuid + `"]`
	btDo(t, ctx, "open Share… on the busy GPU and ask for 2 slices of 2048 MiB",
		chromedp.Click(chromedp.CSS(row+` [data-testid=share-details] summary`)),
		chromedp.WaitVisible(chromedp.CSS(row+` [data-testid=share-slices]`)),
		chromedp.SetValue(chromedp.CSS(row+` [data-testid=share-slices]`), "2"),
		chromedp.SetValue(chromedp.CSS(row+` [data-testid=share-mps-memory]`), "2048"),
	)
	resp := btSubmit(t, ctx, "save the share", chromedp.Click(chromedp.CSS(row+` [data-testid=share-submit]`)))
	resp = btConfirmSudo(t, ctx, resp, btAdminPassword)
	if resp.Status != http.StatusConflict {
		t.Fatalf("sharing a GPU held whole: status %d, want 409", resp.Status)
	}
	if !btVisible(t, ctx, row+` [data-testid=share-slices]`) {
		t.Fatal("the refused GPU's Share… form is closed again")
	}
	want := "Not shared: the GPU is in use whole by workbench busy (root2) — share it once that stops."
	if got := btText(t, ctx, row+` [data-testid=share-error]`); got != want {
		t.Fatalf("reason %q, want %q", got, want)
	}
	if s, m := btValue(t, ctx, row+` [data-testid=share-slices]`), btValue(t, ctx, row+` [data-testid=share-mps-memory]`); s != "2" || m != "2048" {
		t.Fatalf("the form kept slices %q, memory %q; want 2 and 2048", s, m)
	}
	btScreenshot(t, ctx, "gpu-share-refused.png")

	// A memory cap beyond any GPU, on the same open form (sudo mode holds).
	btDo(t, ctx, "type a memory cap of 9999999 MiB",
		chromedp.SetValue(chromedp.CSS(row+` [data-testid=share-mps-memory]`), "9999999"),
	)
	resp = btSubmit(t, ctx, "save again", chromedp.Click(chromedp.CSS(row+` [data-testid=share-submit]`)))
	if resp.Status != http.StatusBadRequest {
		t.Fatalf("a memory cap out of range: status %d, want 400", resp.Status)
	}
	if got := btText(t, ctx, row+` [data-testid=error-mps_memory_mib]`); got != "must be between 0 (no cap) and 4194304" {
		t.Fatalf("memory field says %q", got)
	}
	if btVisible(t, ctx, row+` [data-testid=share-error]`) {
		t.Fatal("the GPU's refusal is still shown for a refusal of a field")
	}
	if m := btValue(t, ctx, row+` [data-testid=share-mps-memory]`); m != "9999999" {
		t.Fatalf("the form kept memory %q", m)
	}

	_, after := p.api("GET", "/api/v1/gpus", admin, "")
	if g := after["items"].([]any)[4].(map[string]any); g["shared_slices"] != float64(0) {
		t.Fatalf("the GPU was shared anyway: %v", g["shared_slices"])
	}
}

// The share form's refusals read in the reader's language.
func TestShareRefusalInChinese(t *testing.T) {
	p := newPortal(t)
	ac := p.client()
	ac.Transport = acceptLanguage{"zh-CN,zh;q=0.9", http.DefaultTransport}
	p.loginSudo(ac, "admin", adminPassword)
	admin := tokenFor(t, p, "admin", "admin")
	_, gpus := p.api("GET", "/api/v1/gpus", admin, "")
	uuid := gpus["items"].([]any)[1].(map[string]any)["uuid"].(string)
	res, body := p.postFormBody(ac, "/admin/gpus/"+uuid+"/share", url.Values{"slices": {"70"}, "mps_memory_mib": {"0"}, "mps_thread_percent": {"0"}})
	if res.StatusCode != http.StatusBadRequest {
		t.Fatalf("70 slices: status %d", res.StatusCode)
	}
	row := mpDoc(t, body).Find(`[data-testid=gpu-row][data-uuid="` + uuid + `"]`)
	if got := strings.TrimSpace(row.Find(`[data-testid=error-slices]`).Text()); got != "必须为 0（不共享）或在 2 到 64 之间" {
		t.Fatalf("slices field says %q", got)
	}
	if _, ok := row.Find(`[data-testid=share-details]`).Attr("open"); !ok {
		t.Fatal("the refused form is closed")
	}
}
