package web_test

import (
	"net/http"
	"strings"
	"testing"

	"github.com/chromedp/chromedp"
)

// A user finds the SSH keys page from the tokens page, pastes a bad key
// (confirms the password, is told why, the paste kept), then a good one, sees its fingerprint,
// deletes it, and goes back to the tokens by the settings tabs.
func TestBrowserSSHKeys(t *testing.T) {
	ts := btStartPortal(t)
	ctx := btNewBrowser(t)
	btLoginAsAdmin(t, ctx, ts.URL)
	btNavigate(t, ctx, ts.URL+"/settings/tokens")
	btSubmit(t, ctx, "click SSH keys", chromedp.Click(chromedp.CSS(`[data-testid=ssh-keys-link]`)))
	if got := btText(t, ctx, "h1"); got != "SSH keys" {
		t.Fatalf("heading %q", got)
	}
	btDo(t, ctx, "paste a bad key",
		chromedp.SendKeys(chromedp.CSS(`[data-testid=new-ssh-key-form] input[name=name]`), "laptop"),
		chromedp.SendKeys(chromedp.CSS(`[data-testid=new-ssh-key-form] textarea[name=public_key]`), "ssh-ed25519 nope"),
	)
	resp := btSubmit(t, ctx, "add the bad key", chromedp.Click(chromedp.CSS(`[data-testid=new-ssh-key-form] button[type=submit]`)))
	// An SSH key is a credential: the first add asks for the password
	// (sudo), then posts what was pasted again.
	resp = btConfirmSudo(t, ctx, resp, btAdminPassword)
	if resp.Status != http.StatusBadRequest {
		t.Fatalf("bad key: status %d", resp.Status)
	}
	if msg := btText(t, ctx, `[data-testid=error-public_key]`); !strings.Contains(msg, "not an OpenSSH public key") {
		t.Fatalf("error %q", msg)
	}
	kept, err := chromedp.Run(ctx, chromedp.Evaluate[string](`document.querySelector('textarea[name=public_key]').value`))
	if err != nil || kept != "ssh-ed25519 nope" {
		t.Fatalf("the paste was lost: %q %v", kept, err)
	}
	key, fp := newAuthorizedKey(t, "admin@laptop")
	btDo(t, ctx, "paste a good key",
		chromedp.SetValue(chromedp.CSS(`[data-testid=new-ssh-key-form] textarea[name=public_key]`), key),
	)
	resp = btSubmit(t, ctx, "add the key", chromedp.Click(chromedp.CSS(`[data-testid=new-ssh-key-form] button[type=submit]`)))
	if resp.Status != http.StatusOK || btLocation(t, ctx).Path != "/settings/ssh-keys" {
		t.Fatalf("add: status %d at %s", resp.Status, btLocation(t, ctx))
	}
	if got := btText(t, ctx, `[data-testid=ssh-key-fingerprint]`); got != fp {
		t.Fatalf("fingerprint shown %q; want %q", got, fp)
	}
	btScreenshot(t, ctx, "ssh-keys.png")
	btSubmit(t, ctx, "delete the key", chromedp.Click(chromedp.CSS(`[data-testid=ssh-key-delete]`)))
	if rows := btTexts(t, ctx, `[data-testid=ssh-key-row]`); len(rows) != 0 {
		t.Fatalf("rows after delete: %v", rows)
	}
	if !btVisible(t, ctx, `[data-testid=no-ssh-keys]`) {
		t.Error("with the last key deleted the page does not say there are none")
	}
	// The tabs lead back to the tokens.
	btSubmit(t, ctx, "click API tokens", chromedp.Click(chromedp.CSS(`[data-testid=settings-tabs] [data-testid=tokens-link]`)))
	if got := btText(t, ctx, "h1"); got != "API tokens" || btLocation(t, ctx).Path != "/settings/tokens" {
		t.Fatalf("after the API tokens tab: heading %q at %s", got, btLocation(t, ctx))
	}
}
