package web_test

import (
	"crypto/rand"
	"net/http"
	"net/url"
	"strings"
	"testing"

	"github.com/chromedp/chromedp"
)

// In Chromium, with JavaScript on and off: an administrator of an offline
// server uploads a `docker save` file on Registries, reads what it loaded,
// clicks "Add to the catalog" and gets the new-image form with the
// reference filled in.
func TestBrowserLoadImageThenAddToCatalog(t *testing.T) {
	for _, js := range []bool{true, false} {
		t.Run(jsName(js), func(t *testing.T) {
			p, cli := enginePortal(t)
			ref := "workbench-test/offline:" + strings.ToLower(rand.Text()[:8])
			file := savedArchive(t, cli, fakeJupyterImage(t), ref, t.TempDir())

			b := btNewBrowser(t)
			if !js {
				btDo(t, b, "disable JavaScript", btScriptsOff())
			}
			btLoginAsAdmin(t, b, p.ts.URL)
			// The upload is an admin change: the password is confirmed first.
			btNavigate(t, b, p.ts.URL+"/sudo?next="+url.QueryEscape("/admin/registries"))
			btDo(t, b, "type the password", chromedp.SendKeys(chromedp.CSS(`[data-testid=sudo-form] input[name=sudo_password]`), btAdminPassword))
			btSubmit(t, b, "confirm the password", chromedp.Click(chromedp.CSS(`[data-testid=sudo-submit]`)))
			btNavigate(t, b, p.ts.URL+"/admin/registries")
			btDo(t, b, "choose the archive", chromedp.SetUploadFiles(chromedp.CSS(`[data-testid=image-archive]`), []string{file}))
			if resp := btSubmit(t, b, "load it", chromedp.Click(chromedp.CSS(`[data-testid=image-load]`))); resp.Status != http.StatusOK {
				t.Fatalf("load: status %d", resp.Status)
			}
			if got := btText(t, b, `[data-testid=image-loaded] code`); got != ref {
				t.Fatalf("loaded %q, want %s", got, ref)
			}
			btSubmit(t, b, "click Add to the catalog", chromedp.Click(chromedp.CSS(`[data-testid=image-loaded-add]`)))
			if got := btLocation(t, b).Path; got != "/admin/images/new" {
				t.Fatalf("Add to the catalog led to %s", got)
			}
			got, err := chromedp.Run(b, chromedp.Value(chromedp.CSS(`input[name=image]`)))
			if err != nil || got != ref {
				t.Fatalf("the new-image form's reference is %q (%v), want %s", got, err, ref)
			}
		})
	}
}
