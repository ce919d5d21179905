package web_test

import (
	"context"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/chromedp/chromedp"
)

// Start without a GPU, as a person does it: with the admin's twin set on
// the one-GPU flavor (API), alice stops her GPU workbench, clicks "Start
// without GPU", sees the page say CPU-only mode (no GPU, billed as the
// twin), then clicks "Restart with GPUs" and gets her GPU back.
func TestBrowserStartWithoutGPUAndRestartWithGPUs(t *testing.T) {
	p, _ := enginePortal(t)
	ctx0 := context.Background()
	alice := tokenFor(t, p, "alice", "user")
	twin, err := p.srv.Store.FlavorByNameOrID(ctx0, "CPU small")
	if err != nil {
		t.Fatal(err)
	}
	fl, err := p.srv.Store.FlavorByNameOrID(ctx0, "1x H100 80GB HBM3")
	if err != nil {
		t.Fatal(err)
	}
	fl.CPUTwinID = twin.ID
	if err := p.srv.Store.UpdateFlavor(ctx0, fl); err != nil {
		t.Fatal(err)
	}
	code, wb := p.api("POST", "/api/v1/workbenches", alice, `{"name":"setup","image":"fake","flavor":"1x H100 80GB HBM3"}`)
	if code != 202 {
		t.Fatalf("launch: %d %v", code, wb)
	}
	id := wb["id"].(string)
	waitState(t, p, alice, id, "running")
	if code, _ := p.api("POST", "/api/v1/workbenches/"+id+"/stop", alice, ""); code != 200 {
		t.Fatalf("stop: %d", code)
	}
	waitState(t, p, alice, id, "stopped")

	ctx := btNewBrowserWithin(t, 3*time.Minute)
	asked := btAcceptDialogs(t, ctx)
	btNavigate(t, ctx, p.ts.URL+"/login")
	if resp := btLogin(t, ctx, "alice", "alice-password"); resp.Status != http.StatusOK {
		t.Fatalf("alice login: status %d", resp.Status)
	}
	btNavigate(t, ctx, p.ts.URL+"/workbenches/"+id)
	if resp := btSubmit(t, ctx, `click "Start without GPU"`, chromedp.Click(chromedp.CSS(`[data-testid=start-cpu]`))); resp.Status != http.StatusOK {
		t.Fatalf("start without GPU: status %d", resp.Status)
	}
	if state, seen := btWaitWorkbenchState(t, ctx, "running", 90*time.Second); state != "running" {
		t.Fatalf("page shows %q (seen %v), want running", state, seen)
	}
	btDo(t, ctx, "wait for the CPU-only notice", chromedp.WaitVisible(chromedp.CSS(`[data-testid=cpu-only-mode]`)))
	if notice := btText(t, ctx, `[data-testid=cpu-only-mode]`); !strings.Contains(notice, "CPU-only mode") || !strings.Contains(notice, "CPU small") {
		t.Errorf("CPU-only notice %q, want the mode and the twin named", notice)
	}
	if gpus := btTexts(t, ctx, `[data-testid=wb-gpu]`); len(gpus) != 0 {
		t.Errorf("GPUs shown in CPU-only mode: %v", gpus)
	}
	_, got := p.api("GET", "/api/v1/workbenches/"+id, alice, "")
	if got["cpu_only"] != true || got["run_flavor"] != "CPU small" || len(got["gpus"].([]any)) != 0 {
		t.Errorf("API in CPU-only mode: cpu_only %v, run_flavor %v, gpus %v", got["cpu_only"], got["run_flavor"], got["gpus"])
	}
	btScreenshot(t, ctx, "cpu-only-mode.png")

	btSubmit(t, ctx, `click "Restart with GPUs"`, chromedp.Click(chromedp.CSS(`[data-testid=restart-gpus]`)))
	deadline := time.Now().Add(90 * time.Second)
	for {
		_, got = p.api("GET", "/api/v1/workbenches/"+id, alice, "")
		if got["state"] == "running" && got["cpu_only"] == false && len(got["gpus"].([]any)) == 1 {
			break
		}
		if got["state"] == "failed" || time.Now().After(deadline) {
			t.Fatalf("after Restart with GPUs: %v", got)
		}
		time.Sleep(100 * time.Millisecond)
	}
	if len(asked()) == 0 || !strings.Contains(asked()[0], "Restart with GPUs") {
		t.Errorf("no warning before restarting: dialogs %v", asked())
	}
	// The page follows the restart by itself (SSE and reloads).
	if state, seen := btWaitWorkbenchState(t, ctx, "running", 90*time.Second); state != "running" {
		t.Fatalf("page shows %q after the restart (seen %v)", state, seen)
	}
	if gpus := btTexts(t, ctx, `[data-testid=wb-gpu]`); len(gpus) != 1 {
		t.Errorf("GPUs shown after Restart with GPUs: %v", gpus)
	}
	if btVisible(t, ctx, `[data-testid=cpu-only-mode]`) {
		t.Errorf("page still says CPU-only mode after Restart with GPUs")
	}
}
