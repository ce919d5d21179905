package web_test

import (
	"context"
	"net/http"
	"net/url"
	"testing"
	"time"

	"github.com/chromedp/chromedp"

	"workbench/models"
)

// Alice changes her own password in the browser: from her settings she
// opens the Password tab; a wrong current password and two new ones that
// differ are refused beside their fields, with nothing changed; then the
// change goes through and she stays signed in. Her other session (another
// browser) is signed out, the old password no longer logs in and the new
// one does, and her API token keeps working. With JavaScript on and off:
// the form is a plain form.
func TestBrowserUserChangesTheirPassword(t *testing.T) {
	for _, js := range []bool{true, false} {
		t.Run(map[bool]string{true: "js-on", false: "js-off"}[js], func(t *testing.T) { changePasswordInTheBrowser(t, js) })
	}
}

func changePasswordInTheBrowser(t *testing.T, js bool) {
	p := newPortal(t)
	ctx := context.Background()
	if _, err := p.srv.Store.CreateUser(ctx, models.NewUser{Username: "alice", Password: "alice-password", Role: models.RoleUser}); err != nil {
		t.Fatal(err)
	}
	token := tokenFor(t, p, "alice", "user")
	other := p.client()
	p.login(other, "alice", "alice-password")

	b := btSignedIn(t, js, p.ts.URL, "alice", "alice-password")
	btNavigate(t, b, p.ts.URL+"/settings/tokens")
	btSubmit(t, b, "open the Password tab", chromedp.Click(chromedp.CSS(`[data-testid=password-link]`)))
	fill := func(current, newPw, again string) {
		t.Helper()
		btDo(t, b, "fill the password form",
			chromedp.WaitVisible(chromedp.CSS(`[data-testid=password-form]`)),
			chromedp.SendKeys(chromedp.CSS(`[data-testid=current-password]`), current),
			chromedp.SendKeys(chromedp.CSS(`[data-testid=new-password]`), newPw),
			chromedp.SendKeys(chromedp.CSS(`[data-testid=new-password-again]`), again))
	}

	fill("not-her-password", "brand-new-pass-1", "brand-new-pass-1")
	if resp := btSubmit(t, b, "submit with a wrong current password", chromedp.Click(chromedp.CSS(`[data-testid=password-submit]`))); resp.Status != http.StatusUnprocessableEntity {
		t.Fatalf("wrong current password: status %d", resp.Status)
	}
	if got := btText(t, b, `[data-testid=error-current_password]`); got != "That is not your password." {
		t.Errorf("current password error %q", got)
	}
	fill("alice-password", "brand-new-pass-1", "brand-new-pass-2")
	btSubmit(t, b, "submit two new passwords that differ", chromedp.Click(chromedp.CSS(`[data-testid=password-submit]`)))
	if got := btText(t, b, `[data-testid=error-new_password_again]`); got != "the two new passwords differ; type the same one twice" {
		t.Errorf("mismatch error %q", got)
	}
	// The browser itself refuses a new password under 10 characters
	// (minlength); the portal refuses it too, for clients that do not.
	res, body := p.postFormBody(other, "/settings/password", url.Values{"current_password": {"alice-password"},
		"new_password": {"short"}, "new_password_again": {"short"}})
	if got := mpDoc(t, body).Find(`[data-testid=error-new_password]`).Text(); res.StatusCode != http.StatusUnprocessableEntity || got != "must be at least 10 characters" {
		t.Errorf("a short new password: %d %q", res.StatusCode, got)
	}
	if _, err := p.srv.Store.Authenticate(ctx, "alice", "alice-password"); err != nil {
		t.Fatalf("the refused changes changed the password: %v", err)
	}

	fill("alice-password", "brand-new-pass-1", "brand-new-pass-1")
	if resp := btSubmit(t, b, "change the password", chromedp.Click(chromedp.CSS(`[data-testid=password-submit]`))); resp.Status != http.StatusOK {
		t.Fatalf("change: status %d", resp.Status)
	}
	const changed = "Password changed. Your other sessions are signed out; your API tokens keep working."
	if got := btText(t, b, `[data-testid=flash]`); got != changed {
		t.Errorf("flash %q", got)
	}
	// A screen reader says the result: the page's live region is filled
	// after load (a status already there at load goes unsaid), and the
	// flash drops its role so it is not said twice. Without JavaScript
	// the flash keeps role=status.
	role, err := chromedp.Run(b, chromedp.AttributeValue(chromedp.CSS(`[data-testid=flash]`), "role"))
	if err != nil {
		t.Fatal(err)
	}
	if js {
		if said := btAnnounced(t, b, 30*time.Second); said != changed {
			t.Errorf("the live region says %q, want %q", said, changed)
		}
		if role, _ = chromedp.Run(b, chromedp.AttributeValue(chromedp.CSS(`[data-testid=flash]`), "role")); role.Exists {
			t.Errorf("the flash keeps role=%q beside the live region: said twice", role.Value)
		}
	} else if role.Value != "status" {
		t.Errorf("without JavaScript the flash has role %q, want status", role.Value)
	}
	// Still signed in here.
	btNavigate(t, b, p.ts.URL+"/usage")
	if loc := btLocation(t, b).Path; loc != "/usage" {
		t.Errorf("after the change the browser is sent to %s, want to stay signed in", loc)
	}
	// The other session is over.
	if res, _ := p.get(other, "/usage"); res.StatusCode != http.StatusSeeOther || res.Header.Get("Location") == "" {
		t.Errorf("the other session after the change: %d %s, want a redirect to the login", res.StatusCode, res.Header.Get("Location"))
	}
	if res := p.postForm(p.client(), "/login", url.Values{"username": {"alice"}, "password": {"alice-password"}}); res.StatusCode != http.StatusUnauthorized {
		t.Errorf("login with the old password: %d, want 401", res.StatusCode)
	}
	p.login(p.client(), "alice", "brand-new-pass-1")
	if code, out := p.api("GET", "/api/v1/me", token, ""); code != http.StatusOK {
		t.Errorf("her API token after the change: %d %v", code, out)
	}
}
