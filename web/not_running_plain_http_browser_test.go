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

// The notebook tab of a stopped workbench, reached over plain HTTP by a
// name other than localhost (http://portal.test:…, where Chromium sends no
// Fetch Metadata): its Start button works. The page sent no Referer
// (Referrer-Policy: no-referrer), so Chromium posted "Origin: null" and the
// portal refused the form as cross-origin ("Form not sent"); Log out there
// failed the same way. The page, the portal's own though under /wb/, can
// be framed by no one: a page of a sibling host (same site, so the
// session cookie goes along) could frame it and take a click on Start.
func TestBrowserNotRunningPageOverPlainHTTP(t *testing.T) {
	for _, js := range []bool{true, false} {
		t.Run(jsName(js), func(t *testing.T) { notRunningPageOverPlainHTTP(t, js) })
	}
}

func notRunningPageOverPlainHTTP(t *testing.T, js bool) {
	p := newPortal(t)
	wb := stoppedOnAFullPool(t, p)("plain")
	u, _ := url.Parse(p.ts.URL)
	base := "http://portal.test:" + u.Port()
	b := btNewBrowserWithin(t, btTimeout, chromedp.Flag("host-resolver-rules", "MAP portal.test 127.0.0.1"))
	if !js {
		btDo(t, b, "disable JavaScript", btScriptsOff())
	}
	btNavigate(t, b, base+"/login")
	if resp := btLogin(t, b, "lin", "lin-password-1"); resp.Status != http.StatusOK {
		t.Fatalf("login: status %d", resp.Status)
	}

	resp := btNavigate(t, b, base+"/wb/"+wb.ID+"/")
	if resp.Status != http.StatusServiceUnavailable {
		t.Fatalf("notebook URL of a stopped workbench: status %d, want 503", resp.Status)
	}
	header := func(name string) string {
		for k, v := range resp.Headers {
			if strings.EqualFold(k, name) {
				s, _ := v.(string)
				return s
			}
		}
		return ""
	}
	if xfo, csp := header("X-Frame-Options"), header("Content-Security-Policy"); xfo != "DENY" || !strings.Contains(csp, "frame-ancestors 'none'") {
		t.Errorf("the not-running page may be framed: X-Frame-Options %q, Content-Security-Policy %q", xfo, csp)
	}

	resp = btSubmit(t, b, "click Start in the notebook tab", chromedp.Click(chromedp.CSS(`[data-testid=not-running-start]`)))
	if resp.Status == http.StatusForbidden {
		t.Fatalf("Start over plain HTTP refused: %q", btText(t, b, "body"))
	}
	got, err := p.srv.Store.WorkbenchByID(context.Background(), wb.ID)
	if err != nil || got.State != models.StateQueued {
		t.Fatalf("after Start from the notebook tab: state %q (%v), want queued (the pool is full)", got.State, err)
	}
	// The tab still shows the page (now "waiting in the queue"): Log out
	// there signs out.
	if loc := btLocation(t, b).Path; loc != "/wb/"+wb.ID+"/" {
		t.Fatalf("after Start the tab is at %s, want the notebook's address", loc)
	}
	resp = btSubmit(t, b, "click Log out in the notebook tab", chromedp.Click(chromedp.CSS(`.account form[action="/logout"] button`)))
	if resp.Status == http.StatusForbidden || btLocation(t, b).Path != "/login" {
		t.Fatalf("Log out over plain HTTP: status %d at %s", resp.Status, btLocation(t, b))
	}
}
