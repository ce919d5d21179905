package web_test

import (
	"net/http"
	"strings"
	"testing"

	"github.com/chromedp/chromedp"
)

// TestBrowserAdminRegistryMirrors: an admin opens Admin → Registries, adds
// two mirrors (one with a path), confirms the password, sees them listed in
// canonical form with the saved notice, then removes one and then the
// other, and the setting is empty again. A malformed line is refused with
// what was typed kept. With JavaScript on and off: the page is plain forms.
func TestBrowserAdminRegistryMirrors(t *testing.T) {
	for _, js := range []bool{true, false} {
		name := "javascript"
		if !js {
			name = "no-javascript"
		}
		t.Run(name, func(t *testing.T) {
			ts := btStartPortal(t)
			ctx := btNewBrowser(t)
			if !js {
				btDo(t, ctx, "disable JavaScript", btScriptsOff())
			}
			btLoginAsAdmin(t, ctx, ts.URL)
			btNavigate(t, ctx, ts.URL+"/admin/users")
			btSubmit(t, ctx, "click the Registries tab", chromedp.Click(chromedp.CSS(`nav.tabs a[href="/admin/registries"]`)))
			if got := btText(t, ctx, "h1"); got != "Registries and offline images" {
				t.Fatalf("heading %q", got)
			}
			mirrors := func() string {
				t.Helper()
				v, err := chromedp.Run(ctx, chromedp.Evaluate[string](`document.querySelector('[data-testid=mirrors]').value`))
				if err != nil {
					t.Fatalf("read the mirrors field: %v", err)
				}
				return v
			}
			if got := mirrors(); got != "" {
				t.Fatalf("a new portal has mirrors %q", got)
			}
			save := func(text string) *http.Response {
				t.Helper()
				btDo(t, ctx, "type the mirrors",
					chromedp.Clear(chromedp.CSS(`[data-testid=mirrors]`)),
					chromedp.SendKeys(chromedp.CSS(`[data-testid=mirrors]`), text),
				)
				resp := btSubmit(t, ctx, "save the mirrors", chromedp.Click(chromedp.CSS(`[data-testid=mirrors-save]`)))
				return &http.Response{StatusCode: int(resp.Status)}
			}

			// Add: the first change asks for the password, then the form
			// is posted again as it was.
			btDo(t, ctx, "type two mirrors",
				chromedp.SendKeys(chromedp.CSS(`[data-testid=mirrors]`), "  NVCR.IO =   nvcr.example.cn \ndocker.io = harbor.lab.cn/dockerhub"),
			)
			resp := btSubmit(t, ctx, "save the mirrors", chromedp.Click(chromedp.CSS(`[data-testid=mirrors-save]`)))
			resp = btConfirmSudo(t, ctx, resp, btAdminPassword)
			if resp.Status != http.StatusOK || btLocation(t, ctx).Path != "/admin/registries" {
				t.Fatalf("after saving: status %d at %s", resp.Status, btLocation(t, ctx))
			}
			if flash := btText(t, ctx, "[data-testid=flash]"); !strings.Contains(flash, "Registry mirrors saved") {
				t.Errorf("flash %q", flash)
			}
			if got, want := mirrors(), "docker.io = harbor.lab.cn/dockerhub\nnvcr.io = nvcr.example.cn\n"; got != want {
				t.Errorf("listed mirrors %q, want %q (canonical: one sorted line each)", got, want)
			}
			btScreenshot(t, ctx, "admin-registries-"+name+".png")

			// A line that is not "registry = mirror" is refused, the text kept.
			if r := save("docker.io = harbor.lab.cn/dockerhub\nquay.io"); r.StatusCode != http.StatusBadRequest {
				t.Errorf("bad line: status %d, want 400", r.StatusCode)
			}
			if msg := btText(t, ctx, `[data-testid=error-mirrors]`); !strings.Contains(msg, "line 2") {
				t.Errorf("error %q does not name the line", msg)
			}
			if got := mirrors(); got != "docker.io = harbor.lab.cn/dockerhub\nquay.io" {
				t.Errorf("typed text not kept: %q", got)
			}

			// Remove one mirror, then the last.
			if r := save("docker.io = harbor.lab.cn/dockerhub"); r.StatusCode != http.StatusOK {
				t.Fatalf("remove nvcr.io: status %d", r.StatusCode)
			}
			if got := mirrors(); got != "docker.io = harbor.lab.cn/dockerhub\n" {
				t.Errorf("after removing nvcr.io: %q", got)
			}
			btDo(t, ctx, "clear the mirrors", chromedp.Clear(chromedp.CSS(`[data-testid=mirrors]`)))
			resp = btSubmit(t, ctx, "save no mirrors", chromedp.Click(chromedp.CSS(`[data-testid=mirrors-save]`)))
			if resp.Status != http.StatusOK {
				t.Fatalf("remove the last mirror: status %d", resp.Status)
			}
			if got := mirrors(); got != "" {
				t.Errorf("after removing every mirror: %q", got)
			}
			if flash := btText(t, ctx, "[data-testid=flash]"); !strings.Contains(flash, "Registry mirrors saved") {
				t.Errorf("flash after removing %q", flash)
			}
		})
	}
}
