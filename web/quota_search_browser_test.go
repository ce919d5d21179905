package web_test

import (
	"context"
	"testing"

	"github.com/chromedp/chromedp"

	"workbench/models"
)

// An admin finds a user in the quota console by typing part of the name
// into its search box and pressing Search: only the matching user's row is
// left, the default and group rows with it gone, the typed text kept. With
// JavaScript and without.
func TestBrowserQuotaConsoleSearch(t *testing.T) {
	for _, js := range []bool{true, false} {
		t.Run(jsName(js), func(t *testing.T) {
			p := newPortal(t)
			for _, name := range []string{"qsann", "qsbob"} {
				if _, _, err := p.srv.Store.OIDCSignIn(context.Background(), models.OIDCIdentity{Issuer: "https://idp.test", Subject: name, Username: name}); err != nil {
					t.Fatal(err)
				}
			}
			ctx := btNewBrowser(t)
			if !js {
				btDo(t, ctx, "disable JavaScript", btScriptsOff())
			}
			btLoginAsAdmin(t, ctx, p.ts.URL)
			btNavigate(t, ctx, p.ts.URL+"/admin/quotas")
			if n := len(btTexts(t, ctx, `[data-testid=quota-row][data-scope=user]`)); n < 3 {
				t.Fatalf("console lists %d users before the search, want the admin, qsann and qsbob", n)
			}
			btDo(t, ctx, "type part of a name", chromedp.SendKeys(chromedp.CSS(`#quota-q`), "qsb"))
			btSubmit(t, ctx, "press Search", chromedp.Click(chromedp.CSS(`[data-testid=quota-search-submit]`)))
			if loc := btLocation(t, ctx); loc.Path != "/admin/quotas" || loc.Query().Get("q") != "qsb" {
				t.Fatalf("after Search the browser is at %s", loc)
			}
			rows := btTexts(t, ctx, `[data-testid=quota-row]`)
			if len(rows) != 1 || !btVisible(t, ctx, `[data-testid=quota-row][data-scope=user][data-name=qsbob]`) {
				t.Fatalf("after searching qsb: %d rows %q, want only qsbob's", len(rows), rows)
			}
			if typed, _ := chromedp.Run(ctx, chromedp.Value(chromedp.CSS(`#quota-q`))); typed != "qsb" {
				t.Errorf("search box keeps %q", typed)
			}
		})
	}
}
