package web_test

import (
	"context"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/chromedp/chromedp"
)

// In Chromium, JavaScript on and off: bob's home volumes hold more than his
// storage limit; the work pages' banner says so, and clicking Launch with
// a GPU flavor is refused in the form with the storage reason and the way
// out (the flavor without GPU), what he typed kept and no workbench made;
// picking that flavor, the launch goes.
func TestBrowserLaunchOverTheStorageQuotaIsRefused(t *testing.T) {
	for _, js := range []bool{true, false} {
		t.Run(jsName(js), func(t *testing.T) {
			p, _ := enginePortal(t)
			ctx := context.Background()
			adminTok := tokenFor(t, p, "admin", "admin")
			bobTok := tokenFor(t, p, "bob", "user")
			bob, _ := p.srv.Store.UserByUsername(ctx, "bob")
			if code, out := p.api("PUT", "/api/v1/admin/quotas/users/bob", adminTok, `{"max_storage_gib":1}`); code != http.StatusOK {
				t.Fatalf("PUT quota: %d %v", code, out)
			}
			if err := p.srv.Store.RecordVolume(ctx, bob.ID, "wb-home-x-bob", 1_500, time.Now(), time.Time{}, 97); err != nil {
				t.Fatal(err)
			}

			b := btSignedIn(t, js, p.ts.URL, "bob", "bob-password")
			btNavigate(t, b, p.ts.URL+"/workbenches/new")
			if banner := strings.Join(btTexts(t, b, `[data-testid=budget-banner]`), " "); !strings.Contains(banner, "Your home storage holds 1.50 GiB, more than your quota of 1 GiB") {
				t.Errorf("the banner reads %q, want the storage over its quota", banner)
			}
			btDo(t, b, "fill the launch form",
				chromedp.WaitVisible(chromedp.CSS(`[data-testid=launch-form]`)),
				chromedp.Click(chromedp.CSS(`[data-testid=image-choice] input[name=image][value="fake"]`)),
				chromedp.Click(chromedp.CSS(`[data-testid=flavor-choice] input[name=flavor][value="1x H100 80GB HBM3"]`)),
				chromedp.SendKeys(chromedp.CSS(`input[name=name]`), "big"),
			)
			btSubmit(t, b, "launch", chromedp.Click(chromedp.CSS(`[data-testid=launch-submit]`)))
			msg := btText(t, b, `[data-testid=launch-error]`)
			if !strings.HasPrefix(msg, "Could not launch: ") || !strings.Contains(msg, "your home storage holds 1.50 GiB, 0.50 GiB over your limit of 1 GiB") ||
				!strings.Contains(msg, "launch one of flavor CPU small") {
				t.Errorf("the refusal reads %q, want the storage reason and the flavor without GPU", msg)
			}
			if name := btValue(t, b, `input[name=name]`); name != "big" {
				t.Errorf("the form lost the name: %q", name)
			}
			if _, mine := p.api("GET", "/api/v1/workbenches", bobTok, ""); len(mine["items"].([]any)) != 0 {
				t.Errorf("the refused launch left a workbench: %v", mine["items"])
			}
			btDo(t, b, "pick the flavor without GPU", chromedp.Click(chromedp.CSS(`[data-testid=flavor-choice] input[name=flavor][value="CPU small"]`)))
			btSubmit(t, b, "launch", chromedp.Click(chromedp.CSS(`[data-testid=launch-submit]`)))
			if path := btLocation(t, b).Path; !strings.HasPrefix(path, "/workbenches/") || path == "/workbenches/new" {
				t.Errorf("after the launch without GPU the browser is at %s, want the workbench's page", path)
			}
			if _, mine := p.api("GET", "/api/v1/workbenches", bobTok, ""); len(mine["items"].([]any)) != 1 {
				t.Errorf("the launch without GPU made %d workbenches, want 1", len(mine["items"].([]any)))
			}
			p.srv.Manager.Wait()
		})
	}
}

// A person over their home-storage limit with a stopped GPU workbench
// clicks Start on its page: refused, the page names the way out and its
// notice says how far over the home is; then they click "Start without
// GPU", and it runs without GPU (same home), the notice now telling them to
// delete files there. With JavaScript and without.
func TestBrowserStartWithoutGPUOverTheStorageQuota(t *testing.T) {
	for _, js := range []bool{true, false} {
		t.Run(jsName(js), func(t *testing.T) {
			p, id, bobTok := storageOverStoppedGPUWorkbench(t)

			b := btSignedIn(t, js, p.ts.URL, "bob", "bob-password")
			btNavigate(t, b, p.ts.URL+"/workbenches/"+id)
			btSubmit(t, b, "Start with GPUs", chromedp.Click(chromedp.CSS(`[data-testid=start]`)))
			if flash := btText(t, b, `[data-testid=flash][data-kind=error]`); !strings.Contains(flash, "0.50 GiB over your limit of 1 GiB") ||
				!strings.Contains(flash, "start this one without GPU") {
				t.Errorf("after Start the page says %q, want the storage reason and the way out", flash)
			}
			if note := btText(t, b, `[data-testid=storage-over]`); !strings.Contains(note, "1.50 GiB of your 1 GiB (0.50 GiB over)") || !strings.Contains(note, "Start without GPU") {
				t.Errorf("the stopped workbench's storage notice reads %q", note)
			}
			if _, got := p.api("GET", "/api/v1/workbenches/"+id, bobTok, ""); got["state"] != "stopped" {
				t.Errorf("the refused Start left it %v, want stopped", got["state"])
			}

			btSubmit(t, b, "Start without GPU", chromedp.Click(chromedp.CSS(`[data-testid=start-cpu]`)))
			if got := waitState(t, p, bobTok, id, "running"); got["cpu_only"] != true {
				t.Fatalf("after Start without GPU: %v, want running without GPU", got)
			}
			btNavigate(t, b, p.ts.URL+"/workbenches/"+id)
			if note := btText(t, b, `[data-testid=storage-over]`); !strings.Contains(note, "1.50 GiB of your 1 GiB (0.50 GiB over)") || !strings.Contains(note, "Delete files here") {
				t.Errorf("the running workbench's storage notice reads %q, want the home over its limit and to delete files here", note)
			}
			btScreenshot(t, b, "storage-over-start-without-gpu-"+jsName(js)+".png")
			p.srv.Manager.Wait()
		})
	}
}
