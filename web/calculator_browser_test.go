package web_test

import (
	"context"
	"encoding/csv"
	"fmt"
	"net/http"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/chromedp/chromedp"

	"workbench/models"
	"workbench/models/pricing"
)

// An admin opens the calculator, sees the detected 8 × H100 server's TCO,
// changes the price, the electricity and the utilisation in the form, reads
// the break-even utilisation against the cheapest offer (the same figure the
// API computes), follows the CSV link and finds the same figure in the
// export. The page is kept as calculator.png.
func TestBrowserCalculatorTCO(t *testing.T) {
	p := calcPortal(t)
	ctx := btNewBrowser(t)
	btLoginAsAdmin(t, ctx, p.ts.URL)

	if resp := btNavigate(t, ctx, p.ts.URL+"/calculator"); resp.Status != http.StatusOK {
		t.Fatalf("GET /calculator: %d", resp.Status)
	}
	btDo(t, ctx, "wait for the TCO form", chromedp.WaitVisible(chromedp.CSS(`[data-testid=tco-form]`)))
	if got := btText(t, ctx, `[data-testid=estimate-total]`); !strings.HasSuffix(got, " USD") {
		t.Errorf("estimate total %q", got)
	}
	for _, f := range [][2]string{{"server_price", "300000"}, {"electricity_per_kwh", "0.2"}, {"utilization", "60%"}} {
		sel := chromedp.CSS(`[data-testid="tco-` + f[0] + `"]`)
		btDo(t, ctx, "fill "+f[0], chromedp.Clear(sel), chromedp.SendKeys(sel, f[1]))
	}
	if resp := btSubmit(t, ctx, "submit the TCO form", chromedp.Click(chromedp.CSS(`[data-testid=tco-submit]`))); resp.Status != http.StatusOK {
		t.Fatalf("TCO form: status %d at %s", resp.Status, resp.URL)
	}
	q := btLocation(t, ctx).Query()
	if q.Get("server_price") != "300000" || q.Get("utilization") != "60%" || q.Get("flavor") == "" {
		t.Fatalf("the calculation is not in the URL: %v", q)
	}
	btDo(t, ctx, "wait for the result", chromedp.WaitVisible(chromedp.CSS(`[data-testid=tco-chart]`)))
	breakEven := btText(t, ctx, `[data-testid=break-even-utilization]`)
	owned := btText(t, ctx, `[data-testid=owned-per-gpu-hour]`)

	// The API's answer for the same inputs.
	tok := tokenFor(t, p, "admin", "admin")
	code, tco := p.api("POST", "/api/v1/calculator/tco", tok, `{"gpu_model":"`+calcGPU+`","server_price":300000,"electricity_per_kwh":0.2,"utilization":0.6}`)
	if code != http.StatusOK {
		t.Fatalf("TCO API: %d %v", code, tco)
	}
	var first map[string]any // the cheapest listed offer: the page folds estimates away
	for _, o := range tco["offers"].([]any) {
		if m := o.(map[string]any); m["estimate"] == false {
			first = m
			break
		}
	}
	be := first["break_even_utilization"].(float64)
	if want := strconv.FormatFloat(be*100, 'f', 1, 64); !strings.HasPrefix(breakEven, strings.TrimSuffix(strings.TrimSuffix(want, "0"), ".")+"%") {
		t.Errorf("break-even on the page %q, API %v", breakEven, be)
	}
	if want := tco["owned_per_gpu_hour"].(string) + " USD/GPU-h"; owned != want {
		t.Errorf("owned per GPU-hour on the page %q, API %q", owned, want)
	}
	// SVG elements have no innerText: count them.
	if n, err := chromedp.Run(ctx, chromedp.Evaluate[int](`document.querySelectorAll("[data-testid=tco-chart] [data-testid=legend-item]").length`)); err != nil || n != 4 {
		t.Errorf("chart legend items %d (%v)", n, err)
	}

	// Download the CSV the page links to, with the browser's session.
	href, err := chromedp.Run(ctx, chromedp.Evaluate[string](`document.querySelector("[data-testid=csv-link]").getAttribute("href")`))
	if err != nil || !strings.HasPrefix(href, "/calculator.csv?") || !strings.Contains(href, "server_price=300000") {
		t.Fatalf("CSV link %q (%v)", href, err)
	}
	body, err := chromedp.Run(ctx, chromedp.Evaluate[string](
		`fetch(document.querySelector("[data-testid=csv-link]").href, {credentials: "same-origin"}).then(r => r.ok ? r.text() : "HTTP " + r.status)`,
		chromedp.EvalAwaitPromise))
	if err != nil {
		t.Fatalf("download the CSV: %v", err)
	}
	recs, err := csv.NewReader(strings.NewReader(strings.TrimPrefix(body, "\ufeff"))).ReadAll()
	if err != nil || len(recs) < 10 {
		t.Fatalf("CSV (%v): %.200s", err, body)
	}
	found := ""
	for _, r := range recs {
		if r[0] == "break_even" && r[2] == "break_even_utilization" && !strings.Contains(r[1], "estimate") {
			found = r[3]
			break
		}
	}
	if want := fmt.Sprintf("%.4f", be); found != want {
		t.Errorf("CSV break-even %q, want %s", found, want)
	}
	noNaN(t, "the downloaded CSV", body)
	btScreenshot(t, ctx, "calculator.png")

	// The admin applies the suggested GPU rate: the owned cost less the
	// CPU and memory the flavor already pays, the figure the API gives.
	suggested := tco["suggested_rate"].(string) + " USD/GPU-h"
	if got := btText(t, ctx, `[data-testid=suggested-rate]`); got != suggested {
		t.Fatalf("suggested rate on the page %q, API %q", got, suggested)
	}
	if note := btText(t, ctx, `[data-testid=cpu-memory-share]`); !strings.Contains(note, calcFlavor) {
		t.Errorf("the page does not say which flavor's CPU and memory were taken off: %q", note)
	}
	asked := btAcceptDialogs(t, ctx)
	resp := btSubmit(t, ctx, "click Apply", chromedp.Click(chromedp.CSS(`[data-testid=apply-rate]`)))
	if resp.Status == http.StatusForbidden {
		resp = btConfirmSudo(t, ctx, resp, btAdminPassword)
	}
	if resp.Status != http.StatusOK || btLocation(t, ctx).Path != "/calculator" {
		t.Fatalf("after Apply: %d at %s", resp.Status, btLocation(t, ctx))
	}
	if q := asked(); len(q) == 0 || !strings.Contains(q[0], suggested) {
		t.Errorf("the confirmation asked %q, want it to name %s", q, suggested)
	}
	if flash := btText(t, ctx, `[data-testid=flash]`); !strings.Contains(flash, "is now "+suggested) {
		t.Errorf("flash %q, want the new rate %s", flash, suggested)
	}
	cur, err := p.srv.Store.CurrentPrices(context.Background(), time.Now().Add(time.Second))
	if err != nil {
		t.Fatal(err)
	}
	if r := cur[models.PriceKey(pricing.GPU, calcGPU)]; r.Micros != int64(tco["suggested_rate_micros"].(float64)) {
		t.Errorf("rate in force %d after Apply, want the suggestion %v", r.Micros, tco["suggested_rate_micros"])
	}
}
