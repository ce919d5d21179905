package web_test

import (
	"context"
	"net/http"
	"strings"
	"testing"

	"github.com/chromedp/chromedp"

	"workbench/models"
)

// TestBrowserAdminClearsLoginLock: an admin sees that an account has failed
// logins against it and clicks "Clear login lock"; the user gets in again.
func TestBrowserAdminClearsLoginLock(t *testing.T) {
	p := newPortal(t)
	if _, err := p.srv.Store.CreateUser(context.Background(), models.NewUser{Username: "ada", Password: "ada-password-1", Role: "user"}); err != nil {
		t.Fatal(err)
	}
	ada := p.clientFrom("127.0.0.6")
	for i := 0; i < 5; i++ {
		p.loginAttempt(ada, "ada", "wrong-password")
	}
	if code, _, _ := p.loginAttempt(ada, "ada", "ada-password-1"); code != http.StatusTooManyRequests {
		t.Fatalf("ada after 5 failures: %d, want 429", code)
	}

	ctx := btNewBrowser(t)
	btLoginAsAdmin(t, ctx, p.ts.URL)
	btNavigate(t, ctx, p.ts.URL+"/admin/users")
	button := `[data-testid=user-row][data-username=ada] [data-testid=clear-login-lock]`
	if !btVisible(t, ctx, button) {
		t.Fatal("no Clear login lock button for ada")
	}
	// Her next login from that address waits: the row says so, not only
	// how many wrong passwords were typed.
	if got := btText(t, ctx, `[data-testid=user-row][data-username=ada] [data-testid=login-delayed]`); !strings.HasPrefix(got, "logins from one address delayed for ") {
		t.Fatalf("ada's row says %q, want her logins delayed", got)
	}
	btScreenshot(t, ctx, "admin-users-login-lock.png")
	resp := btSubmit(t, ctx, "click Clear login lock", chromedp.Click(chromedp.CSS(button)))
	btConfirmSudo(t, ctx, resp, btAdminPassword) // the form is posted again, unchanged
	if body := btText(t, ctx, "[data-testid=flash]"); !strings.Contains(body, "Failed logins of ada cleared") {
		t.Fatalf("no confirmation after the click: %.400s", body)
	}
	if btVisible(t, ctx, button) {
		t.Fatal("the button is still there after clearing")
	}
	if code, _, _ := p.loginAttempt(ada, "ada", "ada-password-1"); code != http.StatusSeeOther {
		t.Fatalf("ada after the admin cleared the lock: %d, want 303", code)
	}
}

// TestBrowserDisabledUserIsToldWhy: a disabled user types her right
// password and clicks Log in, six times; each time the page says the
// account is disabled (not "invalid password", and never "too many
// attempts"), with her name still in the form.
func TestBrowserDisabledUserIsToldWhy(t *testing.T) {
	p := newPortal(t)
	ctx0 := context.Background()
	u, err := p.srv.Store.CreateUser(ctx0, models.NewUser{Username: "dora", Password: "dora-password-1", Role: "user"})
	if err != nil {
		t.Fatal(err)
	}
	if err := p.srv.Store.SetUserDisabled(ctx0, u.ID, true); err != nil {
		t.Fatal(err)
	}
	ctx := btNewBrowser(t)
	btNavigate(t, ctx, p.ts.URL+"/login")
	for i := 0; i < 6; i++ {
		resp := btLogin(t, ctx, "dora", "dora-password-1")
		if resp.Status != http.StatusForbidden {
			t.Fatalf("try %d: status %d, want 403", i, resp.Status)
		}
		if msg := btText(t, ctx, `[data-testid=login-error]`); !strings.Contains(msg, "Your account is disabled") {
			t.Fatalf("try %d: the page says %q", i, msg)
		}
	}
	name, err := chromedp.Run(ctx, chromedp.Evaluate[string](`document.querySelector("input[name=username]").value`))
	if err != nil || name != "dora" {
		t.Errorf("the form lost the username: %q (%v)", name, err)
	}
}
