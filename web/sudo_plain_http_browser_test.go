package web_test

import (
	"net/http"
	"net/url"
	"strings"
	"testing"

	"github.com/chromedp/chromedp"
)

// In Chromium, JavaScript on and off, the admin reaches the portal over
// plain HTTP by a name other than localhost (http://portal.test:…), where
// the browser sends no Fetch Metadata: adding a user asks for the password
// and says why; right after, adding a second asks again (the 10-minute
// window would also serve a notebook script's post there).
func TestBrowserSudoOverPlainHTTPAsksEachTime(t *testing.T) {
	for _, js := range []bool{true, false} {
		t.Run(jsName(js), func(t *testing.T) {
			p := newPortal(t)
			u, _ := url.Parse(p.ts.URL)
			base := "http://portal.test:" + u.Port()
			b := btNewBrowserWithin(t, btTimeout, chromedp.Flag("host-resolver-rules", "MAP portal.test 127.0.0.1"))
			if !js {
				btDo(t, b, "disable JavaScript", btScriptsOff())
			}
			btLoginAsAdmin(t, b, base)
			for _, name := range []string{"plain1", "plain2"} {
				btNavigate(t, b, base+"/admin/users")
				btDo(t, b, "fill the new user form",
					chromedp.WaitVisible(chromedp.CSS(`[data-testid=new-user-form] input[name=username]`)),
					chromedp.SendKeys(chromedp.CSS(`[data-testid=new-user-form] input[name=username]`), name),
					chromedp.SendKeys(chromedp.CSS(`[data-testid=new-user-form] input[name=password]`), name+"-password-1"))
				resp := btSubmit(t, b, "click Add user", chromedp.Click(chromedp.CSS(`[data-testid=new-user-form] button[type=submit]`)))
				if !btVisible(t, b, `[data-testid=sudo-per-post]`) {
					t.Fatalf("%s: the confirm page does not say why it asks each time", name)
				}
				resp = btConfirmSudo(t, b, resp, btAdminPassword)
				if resp.Status != http.StatusOK || !strings.Contains(btText(t, b, "[data-testid=flash]"), name) {
					t.Fatalf("%s: after the password: status %d, flash %q", name, resp.Status, btText(t, b, "[data-testid=flash]"))
				}
			}
		})
	}
}
