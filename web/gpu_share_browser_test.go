package web_test

import (
	"net/http"
	"strings"
	"testing"

	"github.com/chromedp/chromedp"
)

// TestBrowserAdminSharesAGPU: an admin opens /gpus, opens Share… on a GPU,
// types 3 slices and saves; the portal asks for the password (sudo mode),
// then the GPU shows as shared in 3 free slices, labelled "shared — no
// memory isolation".
func TestBrowserAdminSharesAGPU(t *testing.T) {
	ctx := btNewBrowser(t)
	ts := btStartPortal(t)
	btLoginAsAdmin(t, ctx, ts.URL)
	btNavigate(t, ctx, ts.URL+"/gpus")
	row := `[data-testid=gpu-row]:nth-of-type(5)`
	btDo(t, ctx, "open Share… on GPU 4 and ask for 3 slices",
		chromedp.WaitVisible(chromedp.CSS(row+` [data-testid=share-details] summary`)),
		chromedp.Click(chromedp.CSS(row+` [data-testid=share-details] summary`)),
		chromedp.WaitVisible(chromedp.CSS(row+` [data-testid=share-slices]`)),
		chromedp.SetValue(chromedp.CSS(row+` [data-testid=share-slices]`), "3"),
	)
	resp := btSubmit(t, ctx, "save the share", chromedp.Click(chromedp.CSS(row+` [data-testid=share-submit]`)))
	resp = btConfirmSudo(t, ctx, resp, btAdminPassword)
	if resp.Status != http.StatusOK || btLocation(t, ctx).Path != "/gpus" {
		t.Fatalf("after saving: status %d at %s", resp.Status, btLocation(t, ctx))
	}
	if got := btText(t, ctx, row+` [data-testid=gpu-state]`); got != "Shared: 3 of 3 slices free" {
		t.Fatalf("GPU 4 state %q", got)
	}
	if got := btText(t, ctx, row+` [data-testid=shared-badge]`); got != "shared — no memory isolation" {
		t.Fatalf("GPU 4 badge %q", got)
	}
	units := btTexts(t, ctx, row+` [data-testid=gpu-unit]`)
	if len(units) != 3 || !strings.HasPrefix(units[2], "slice 2") {
		t.Fatalf("GPU 4 units %q", units)
	}
	btScreenshot(t, ctx, "gpu-shared.png")
}
