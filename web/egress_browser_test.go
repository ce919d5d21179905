package web_test

import (
	"net/http"
	"strings"
	"testing"

	"github.com/chromedp/chromedp"
)

// TestBrowserAdminSetsEgressPolicy: an admin opens Admin → Egress, picks
// "Nothing", types a CIDR with host bits, saves and is told which field is
// wrong with what was typed kept; fixes it, saves, and the page shows the
// new policy in canonical form.
func TestBrowserAdminSetsEgressPolicy(t *testing.T) {
	ts := btStartPortal(t)
	ctx := btNewBrowser(t)
	btLoginAsAdmin(t, ctx, ts.URL)
	btNavigate(t, ctx, ts.URL+"/admin/users")
	btSubmit(t, ctx, "click the Egress tab", chromedp.Click(chromedp.CSS(`nav.tabs a[href="/admin/egress"]`)))
	if got := btText(t, ctx, "h1"); got != "Network egress" {
		t.Fatalf("heading %q", got)
	}
	btDo(t, ctx, "choose Nothing and type a bad CIDR",
		chromedp.Click(chromedp.CSS(`[data-testid=egress-mode-none]`)),
		chromedp.SendKeys(chromedp.CSS(`[data-testid=egress-allow]`), "10.20.0.0/16\n10.1.2.3/8"),
	)
	resp := btSubmit(t, ctx, "save", chromedp.Click(chromedp.CSS(`[data-testid=egress-save]`)))
	resp = btConfirmSudo(t, ctx, resp, btAdminPassword) // the form is posted again, unchanged
	if resp.Status != http.StatusBadRequest {
		t.Errorf("bad CIDR: status %d, want 400", resp.Status)
	}
	if msg := btText(t, ctx, `[data-testid=error-allow]`); !strings.Contains(msg, "10.1.2.3/8") || !strings.Contains(msg, "10.0.0.0/8") {
		t.Errorf("error message %q does not name the entry and the fix", msg)
	}
	btScreenshot(t, ctx, "admin-egress-error.png")
	checked, err := chromedp.Run(ctx, chromedp.Evaluate[bool](`document.querySelector('[data-testid=egress-mode-none]').checked`))
	if err != nil || !checked {
		t.Errorf("the chosen mode was lost on the error page (%v)", err)
	}

	btDo(t, ctx, "fix the CIDR",
		chromedp.Clear(chromedp.CSS(`[data-testid=egress-allow]`)),
		chromedp.SendKeys(chromedp.CSS(`[data-testid=egress-allow]`), "10.20.0.0/16\n192.168.5.7"),
	)
	resp = btSubmit(t, ctx, "save", chromedp.Click(chromedp.CSS(`[data-testid=egress-save]`)))
	if resp.Status != http.StatusOK || btLocation(t, ctx).Path != "/admin/egress" {
		t.Fatalf("after saving: status %d at %s", resp.Status, btLocation(t, ctx))
	}
	if flash := btText(t, ctx, ".flash"); !strings.Contains(flash, "Egress policy saved") {
		t.Errorf("flash %q", flash)
	}
	allow, err := chromedp.Run(ctx, chromedp.Evaluate[string](`document.querySelector('[data-testid=egress-allow]').value`))
	if err != nil || allow != "10.20.0.0/16\n192.168.5.7/32" {
		t.Errorf("allow-list shown as %q (%v)", allow, err)
	}
	checked, err = chromedp.Run(ctx, chromedp.Evaluate[bool](`document.querySelector('[data-testid=egress-mode-none]').checked`))
	if err != nil || !checked {
		t.Errorf("saved mode not shown (%v)", err)
	}
	btScreenshot(t, ctx, "admin-egress.png")
}

// An admin reading Chinese clicks 中文, types an address that is not one
// into the egress form and clicks Save: the field's error is in Chinese,
// with the entry as typed. With JavaScript on and off.
func TestBrowserEgressErrorInChinese(t *testing.T) {
	for _, js := range []bool{true, false} {
		t.Run(jsName(js), func(t *testing.T) {
			ts := btStartPortal(t)
			ctx := btNewBrowser(t)
			if !js {
				btDo(t, ctx, "disable JavaScript", btScriptsOff())
			}
			btLoginAsAdmin(t, ctx, ts.URL)
			btNavigate(t, ctx, ts.URL+"/admin/egress")
			btSubmit(t, ctx, "click 中文 in the header", chromedp.Click(chromedp.CSS(`[data-testid=lang-zh-CN]`)))
			btDo(t, ctx, "choose 全部禁止 and type 999.1.1.1",
				chromedp.Click(chromedp.CSS(`[data-testid=egress-mode-none]`)),
				chromedp.SendKeys(chromedp.CSS(`[data-testid=egress-allow]`), "999.1.1.1"),
			)
			resp := btSubmit(t, ctx, "click 保存", chromedp.Click(chromedp.CSS(`[data-testid=egress-save]`)))
			resp = btConfirmSudo(t, ctx, resp, btAdminPassword)
			if resp.Status != http.StatusBadRequest {
				t.Fatalf("bad address: status %d, want 400", resp.Status)
			}
			want := `"999.1.1.1" 不是 IPv4 地址或 CIDR（例如 10.20.0.0/16）`
			if got := btText(t, ctx, `[data-testid=error-allow]`); got != want {
				t.Errorf("the page says %q, want %q", got, want)
			}
		})
	}
}
