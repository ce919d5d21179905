package web_test

import (
	"context"
	"strings"
	"testing"

	"github.com/chromedp/chromedp"
)

// In Chromium: Revoke on the API tokens page asks first, naming the token
// (a revoked token breaks the scripts that use it, for good), and the
// button says which token it revokes to a screen reader.
func TestBrowserTokenRevokeAsksFirst(t *testing.T) {
	p, b := btAdminIn(t, true)
	ctx := context.Background()
	admin, err := p.srv.Store.UserByUsername(ctx, "admin")
	if err != nil {
		t.Fatal(err)
	}
	tok, _, err := p.srv.Store.CreateToken(ctx, admin.ID, "ci-bot", 0)
	if err != nil {
		t.Fatal(err)
	}
	asked := btAcceptDialogs(t, b)
	btNavigate(t, b, p.ts.URL+"/settings/tokens")
	if name := strings.Join(strings.Fields(btText(t, b, `[data-testid=token-revoke]`)), " "); name != "Revoke ci-bot" {
		t.Errorf("the revoke button reads %q to a screen reader, want it to name the token", name)
	}
	btSubmit(t, b, "click Revoke", chromedp.Click(chromedp.CSS(`[data-testid=token-revoke]`)))
	if q := asked(); len(q) != 1 || !strings.Contains(q[0], "ci-bot") {
		t.Fatalf("questions asked: %q, want one naming the token", q)
	}
	list, err := p.srv.Store.ListTokens(ctx, admin.ID)
	if err != nil {
		t.Fatal(err)
	}
	for _, l := range list {
		if l.ID == tok.ID && l.RevokedAt == nil {
			t.Fatal("the token is not revoked after the confirmed click")
		}
	}
}

// In Chromium: a new token's secret, shown once, takes the focus with its
// text selected, so the keyboard copies it at once.
func TestBrowserNewTokenSecretIsSelected(t *testing.T) {
	p, b := btAdminIn(t, true)
	btNavigate(t, b, p.ts.URL+"/settings/tokens")
	btDo(t, b, "name a token", chromedp.SendKeys(chromedp.CSS(`[data-testid=new-token-form] input[name=name]`), "laptop"))
	resp := btSubmit(t, b, "click Create", chromedp.Click(chromedp.CSS(`[data-testid=new-token-form] button[type=submit]`)))
	if resp.Status == 403 {
		btConfirmSudo(t, b, resp, btAdminPassword)
	}
	got, err := chromedp.Run(b, chromedp.Evaluate[string](`document.activeElement.getAttribute("data-testid") + " " + window.getSelection().toString()`))
	if err != nil {
		t.Fatal(err)
	}
	if secret := btText(t, b, `[data-testid=new-token-secret]`); got != "new-token-secret "+secret || !strings.HasPrefix(secret, "wbt_") {
		t.Errorf("focus and selection %q; want the secret %q focused and selected", got, secret)
	}
}
