package web_test

import (
	"context"
	"net/http"
	"strings"
	"testing"

	"github.com/chromedp/chromedp"
)

// TestBrowserWorkbenchTokenSSO: a user who signs in through single sign-on
// (no portal password) creates a workbench token on the workbench page: the
// button asks for a fresh sign-in at the provider (sudo mode), the page
// then shows the token once, the proxy accepts it for that workbench, and
// the Revoke button ends it.
func TestBrowserWorkbenchTokenSSO(t *testing.T) {
	idp := newTestIdP(t)
	p, _ := enginePortal(t, ssoConfig(idp))
	idp.setUser("carol", idpUser{Subject: "sub-carol", Username: "carol", Name: "Carol Chen"})
	ctx := btNewBrowserWithin(t, 2*btTimeout)
	bg := context.Background()

	if status, loc := btSSOSignIn(t, ctx, p, idp, "carol"); status != http.StatusOK || loc.Path != "/" {
		t.Fatalf("sign-in: %d %s", status, loc)
	}
	carol, err := p.srv.Store.UserByUsername(bg, "carol")
	if err != nil {
		t.Fatal(err)
	}
	_, api, err := p.srv.Store.CreateToken(bg, carol.ID, "launcher", 0)
	if err != nil {
		t.Fatal(err)
	}
	code, wb := p.api("POST", "/api/v1/workbenches", api, `{"name":"tok","image":"fake","flavor":"CPU small"}`)
	if code != http.StatusAccepted {
		t.Fatalf("launch: %d %v", code, wb)
	}
	id := wb["id"].(string)
	waitState(t, p, api, id, "running")

	btNavigate(t, ctx, p.ts.URL+"/workbenches/"+id)
	btDo(t, ctx, "name the token", chromedp.SendKeys(chromedp.CSS(`[data-testid=wb-token-name]`), "vscode"))
	resp := btSubmit(t, ctx, "click Create token", chromedp.Click(chromedp.CSS(`[data-testid=wb-token-create]`)))
	if resp.Status != http.StatusForbidden || !btVisible(t, ctx, `[data-testid=sudo-sso]`) {
		t.Fatalf("Create token without a fresh sign-in: %d, want the confirm page with the SSO button", resp.Status)
	}
	btScreenshot(t, ctx, "wb-token-sudo-sso.png")
	btSubmit(t, ctx, "confirm through the provider", chromedp.Click(chromedp.CSS(`[data-testid=sudo-sso]`)))
	if q := idp.lastAuthorizeQuery(); q.Get("prompt") != "login" || q.Get("max_age") != "0" {
		t.Errorf("sudo sign-in does not ask the provider for a fresh login: %v", q)
	}
	btDo(t, ctx, "sign in again at the provider",
		chromedp.WaitVisible(chromedp.CSS(`[data-testid=idp-login]`)),
		chromedp.SendKeys(chromedp.CSS(`[data-testid=idp-login]`), "carol"))
	btSubmit(t, ctx, "submit at the provider", chromedp.Click(chromedp.CSS(`[data-testid=idp-signin]`)))
	if loc := btLocation(t, ctx); loc.Path != "/workbenches/"+id {
		t.Fatalf("after confirming the browser is at %s, want back on the workbench page", loc)
	}
	btDo(t, ctx, "name the token again", chromedp.SendKeys(chromedp.CSS(`[data-testid=wb-token-name]`), "vscode"))
	if resp := btSubmit(t, ctx, "click Create token", chromedp.Click(chromedp.CSS(`[data-testid=wb-token-create]`))); resp.Status != http.StatusOK {
		t.Fatalf("Create token after confirming: %d", resp.Status)
	}
	secret := btText(t, ctx, `[data-testid=new-wb-token-secret]`)
	if !strings.HasPrefix(secret, "wbk_") {
		t.Fatalf("the page shows %q, want the new token", secret)
	}
	if url := btText(t, ctx, `[data-testid=wb-token-server-url]`); url != p.ts.URL+"/wb/"+id+"/" {
		t.Errorf("server URL shown %q", url)
	}
	btScreenshot(t, ctx, "wb-token-created.png")

	use := func() int {
		res, _ := wbTokenGet(t, p, "/wb/"+id+"/api/kernels", map[string]string{"Authorization": "token " + secret})
		return res.StatusCode
	}
	if code := use(); code != http.StatusOK {
		t.Fatalf("the new token through the proxy: %d", code)
	}
	btSubmit(t, ctx, "click Revoke", chromedp.Click(chromedp.CSS(`[data-testid=wb-token-revoke]`)))
	if st := btText(t, ctx, `[data-testid=wb-token-status]`); st != "revoked" {
		t.Errorf("token status after Revoke: %q", st)
	}
	if code := use(); code != http.StatusForbidden {
		t.Fatalf("the revoked token through the proxy: %d, want 403", code)
	}
}
