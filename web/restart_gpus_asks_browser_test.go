package web_test

import (
	"context"
	"net/http"
	"strings"
	"testing"

	"github.com/chromedp/chromedp"

	"workbench/models"
)

// With JavaScript off, "Restart with GPUs" on a workbench running in
// CPU-only mode asks first, as the page's confirm() does with script:
// unsaved work in memory is lost. "No, go back" returns to the workbench,
// still running without GPUs, and nothing was restarted.
func TestBrowserRestartWithGPUsAsksWithoutJavaScript(t *testing.T) {
	p := newPortal(t)
	bg := context.Background()
	tokenFor(t, p, "alice", "user")
	alice, err := p.srv.Store.UserByUsername(bg, "alice")
	if err != nil {
		t.Fatal(err)
	}
	gpu, err := p.srv.Store.FlavorByNameOrID(bg, "1x H100 80GB HBM3")
	if err != nil {
		t.Fatal(err)
	}
	twin, err := p.srv.Store.FlavorByNameOrID(bg, "CPU small")
	if err != nil {
		t.Fatal(err)
	}
	wb := p.runningRecord(alice, "cpu-mode", models.GPUNeed{})
	if err := p.srv.Store.UpdateWorkbench(bg, wb.ID, map[string]any{"flavor_id": gpu.ID, "run_flavor_id": twin.ID}); err != nil {
		t.Fatal(err)
	}
	cpuOnly := func() bool {
		w, err := p.srv.Store.WorkbenchByID(bg, wb.ID)
		if err != nil {
			t.Fatal(err)
		}
		return w.State == models.StateRunning && w.CPUOnly()
	}

	ctx := btNewBrowser(t)
	btDo(t, ctx, "disable JavaScript", btScriptsOff())
	btNavigate(t, ctx, p.ts.URL+"/login")
	if resp := btLogin(t, ctx, "alice", "alice-password"); resp.Status != http.StatusOK {
		t.Fatalf("login: %d", resp.Status)
	}
	btNavigate(t, ctx, p.ts.URL+"/workbenches/"+wb.ID)
	btDo(t, ctx, "wait for Restart with GPUs", chromedp.WaitVisible(chromedp.CSS(`[data-testid=restart-gpus]`)))
	if resp := btSubmit(t, ctx, `click "Restart with GPUs"`, chromedp.Click(chromedp.CSS(`[data-testid=restart-gpus]`))); resp.Status != http.StatusOK {
		t.Fatalf("Restart with GPUs: %d", resp.Status)
	}
	if !btVisible(t, ctx, `[data-testid=confirm]`) {
		t.Fatalf("no question asked: at %s", btLocation(t, ctx))
	}
	if q := btText(t, ctx, `[data-testid=confirm-question]`); !strings.Contains(q, "unsaved work in memory is lost") {
		t.Fatalf("the question reads %q", q)
	}
	if s := btText(t, ctx, `[data-testid=confirm-subject]`); s != "Workbench cpu-mode" {
		t.Errorf("the question names %q", s)
	}
	if !cpuOnly() {
		t.Fatal("the workbench was restarted before the question was answered")
	}
	btScreenshot(t, ctx, "restart-gpus-question.png")
	btSubmit(t, ctx, "click No, go back", chromedp.Click(chromedp.CSS(`[data-testid=confirm-no]`)))
	if loc := btLocation(t, ctx).Path; loc != "/workbenches/"+wb.ID || !cpuOnly() {
		t.Fatalf("after No: at %s, still running without GPUs %v", loc, cpuOnly())
	}
	if !btVisible(t, ctx, `[data-testid=restart-gpus]`) {
		t.Error("back on the workbench, Restart with GPUs is not offered")
	}
}
