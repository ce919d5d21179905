package web_test

import (
	"testing"

	"github.com/chromedp/chromedp"
)

// An admin types /admin and lands on the console; from there the tabs lead
// through the Queue and Cloud prices pages and back, each page showing the
// tabs with its own marked (those two had none). With JavaScript on and off:
// the tabs are plain links.
func TestBrowserAdminTabsLeadEverywhere(t *testing.T) {
	for _, js := range []bool{true, false} {
		t.Run(jsName(js), func(t *testing.T) {
			p := newPortal(t)
			ctx := btNewBrowser(t)
			if !js {
				btDo(t, ctx, "disable JavaScript", btScriptsOff())
			}
			btLoginAsAdmin(t, ctx, p.ts.URL)
			btNavigate(t, ctx, p.ts.URL+"/admin")
			if got := btLocation(t, ctx).Path; got != "/admin/users" {
				t.Fatalf("typing /admin led to %s, want /admin/users", got)
			}
			for _, step := range []struct{ href, heading string }{
				{"/admin/queue", "Queue"},
				{"/admin/cloud-prices", "Cloud prices"},
				{"/admin/users", "Users"},
			} {
				btSubmit(t, ctx, "click the tab "+step.href, chromedp.Click(chromedp.CSS(`nav.tabs a[href="`+step.href+`"]`)))
				if got := btLocation(t, ctx).Path; got != step.href {
					t.Fatalf("the %s tab led to %s", step.href, got)
				}
				if got := btText(t, ctx, "h1"); got != step.heading {
					t.Fatalf("%s heading %q, want %q", step.href, got, step.heading)
				}
				if got := btTexts(t, ctx, `nav.tabs a.active`); len(got) != 1 || got[0] != step.heading {
					t.Fatalf("%s: active tabs %q, want [%s]", step.href, got, step.heading)
				}
			}
		})
	}
}
