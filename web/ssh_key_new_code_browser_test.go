package web_test

import (
	"net/http"
	"regexp"
	"strings"
	"testing"

	"github.com/chromedp/chromedp"

	"workbench/web"
)

// A user adds an SSH key on the settings page and reads the command that
// verifies it; they click "New code" and read another command, and the
// old code is nowhere on the page (neither the key's row nor the notice
// above it still shows it: it no longer verifies anything). With
// JavaScript on and off.
func TestBrowserSSHKeyNewCode(t *testing.T) {
	for _, js := range []bool{true, false} {
		t.Run(jsName(js), func(t *testing.T) { testSSHKeyNewCode(t, js) })
	}
}

func testSSHKeyNewCode(t *testing.T, js bool) {
	p := newPortal(t, func(c *web.Config) { c.SSHAddr = "127.0.0.1:2222" })
	tokenFor(t, p, "alice", "user")
	ctx := btNewBrowser(t)
	if !js {
		btDo(t, ctx, "disable JavaScript", btScriptsOff())
	}
	btNavigate(t, ctx, p.ts.URL+"/login")
	if resp := btLogin(t, ctx, "alice", "alice-password"); resp.Status != http.StatusOK {
		t.Fatalf("alice's login: %d", resp.Status)
	}
	btNavigate(t, ctx, p.ts.URL+"/settings/ssh-keys")
	key, fp := newAuthorizedKey(t, "alice@laptop")
	form := `[data-testid=new-ssh-key-form] `
	btDo(t, ctx, "paste a key",
		chromedp.WaitVisible(chromedp.CSS(form+`input[name=name]`)),
		chromedp.SendKeys(chromedp.CSS(form+`input[name=name]`), "laptop"),
		chromedp.SetValue(chromedp.CSS(form+`textarea[name=public_key]`), key),
	)
	resp := btSubmit(t, ctx, "click Add key", chromedp.Click(chromedp.CSS(form+`button[type=submit]`)))
	resp = btConfirmSudo(t, ctx, resp, "alice-password") // a key is a credential: the password first
	if resp.Status != http.StatusOK || btLocation(t, ctx).Path != "/settings/ssh-keys" {
		t.Fatalf("add: status %d at %s", resp.Status, btLocation(t, ctx))
	}
	if got := btText(t, ctx, `[data-testid=ssh-key-fingerprint]`); got != fp {
		t.Fatalf("fingerprint %q, want %q", got, fp)
	}
	command := regexp.MustCompile(`^ssh -p 2222 (verify-[a-z0-9]+)@127\.0\.0\.1$`)
	codeOf := func(what string) string {
		t.Helper()
		cmd := btText(t, ctx, `[data-testid=ssh-key-row] [data-testid=ssh-key-verify-command]`)
		m := command.FindStringSubmatch(cmd)
		if m == nil {
			t.Fatalf("%s: the key's row shows %q, want a verify command", what, cmd)
		}
		if !btVisible(t, ctx, `[data-testid=ssh-key-row] [data-testid=ssh-key-verify-expires]`) {
			t.Fatalf("%s: the row does not say until when the code is valid", what)
		}
		return m[1]
	}
	old := codeOf("after adding")
	if f := btText(t, ctx, `[data-testid=flash]`); !strings.Contains(f, old) {
		t.Errorf("the notice after adding reads %q; want the command with %s", f, old)
	}

	resp = btSubmit(t, ctx, `click "New code"`, chromedp.Click(chromedp.CSS(`[data-testid=ssh-key-row] [data-testid=ssh-key-new-code]`)))
	if resp.Status != http.StatusOK || btLocation(t, ctx).Path != "/settings/ssh-keys" {
		t.Fatalf("New code: status %d at %s", resp.Status, btLocation(t, ctx))
	}
	btDo(t, ctx, "wait for the key's row", chromedp.WaitVisible(chromedp.CSS(`[data-testid=ssh-key-row] [data-testid=ssh-key-verify-command]`)))
	renewed := codeOf(`after "New code"`)
	if renewed == old {
		t.Fatalf(`"New code" shows the same code %s`, old)
	}
	if f := btText(t, ctx, `[data-testid=flash]`); !strings.Contains(f, "New verification code for key laptop") || !strings.Contains(f, renewed) {
		t.Errorf("the notice after New code reads %q; want the new command with %s", f, renewed)
	}
	html, err := chromedp.Run(ctx, chromedp.Evaluate[string](`document.documentElement.outerHTML`))
	if err != nil {
		t.Fatal(err)
	}
	if strings.Contains(html, old) {
		t.Fatalf("the old code %s is still on the page after New code", old)
	}
	if rows := btTexts(t, ctx, `[data-testid=ssh-key-row]`); len(rows) != 1 {
		t.Fatalf("%d key rows after New code, want the one key", len(rows))
	}
	btScreenshot(t, ctx, "ssh-key-new-code-"+jsName(js)+".png")
}
