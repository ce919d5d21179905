package web_test

import (
	"fmt"
	"net/http"
	"net/url"
	"strings"
	"testing"

	"github.com/chromedp/chromedp"
)

// Colleagues behind one address, in Chromium: bob logs in and out in his
// browser. Someone at the same address then guesses passwords until the
// address is held back. A browser that never logged in here (a context of
// its own: no cookies) is told to wait, bob's right password too; bob's
// browser, which the portal knows, logs bob in past the delay, and only
// bob: as admin it waits as anyone does.
func TestBrowserKnownBrowserLogsInPastItsAddressDelay(t *testing.T) {
	p := newPortal(t)
	tokenFor(t, p, "bob", "user")
	known := btNewBrowser(t)
	btNavigate(t, known, p.ts.URL+"/login")
	if resp := btLogin(t, known, "bob", "bob-password"); resp.Status != http.StatusOK || btLocation(t, known).Path != "/" {
		t.Fatalf("bob's first login: %d at %s", resp.Status, btLocation(t, known))
	}
	btSubmit(t, known, "log out", chromedp.Click(chromedp.CSS(`.account form[action="/logout"] button`)))

	// Another browser context of the same Chromium: its own cookie jar.
	fresh, cancel := chromedp.NewContext(known, chromedp.WithNewBrowserContext())
	t.Cleanup(cancel)

	guesser := p.client() // the same address as both browsers
	for i := 0; ; i++ {
		res := p.postForm(guesser, "/login", url.Values{"username": {fmt.Sprintf("user%d", i)}, "password": {"guess-password-1"}})
		if res.StatusCode == http.StatusTooManyRequests {
			break
		}
		if res.StatusCode != http.StatusUnauthorized || i > 100 {
			t.Fatalf("guess %d: %d", i, res.StatusCode)
		}
	}

	btNavigate(t, fresh, p.ts.URL+"/login")
	resp := btLogin(t, fresh, "bob", "bob-password")
	if resp.Status != http.StatusTooManyRequests {
		t.Fatalf("bob in a browser new to the portal, at the held-back address: %d, want 429", resp.Status)
	}
	if msg := btText(t, fresh, `[data-testid=login-error]`); !strings.Contains(msg, "from your network address") || !strings.Contains(msg, "Try again in ") {
		t.Errorf("the new browser is told %q", msg)
	}
	if u, err := chromedp.Run(fresh, chromedp.Value(chromedp.CSS(`input[name=username]`))); err != nil || u != "bob" {
		t.Errorf("the username typed is not kept: %q (%v)", u, err)
	}
	btScreenshot(t, fresh, "device-login-delayed.png")

	// bob's browser: as admin, held back; as bob, in.
	btNavigate(t, known, p.ts.URL+"/login")
	if resp := btLogin(t, known, "admin", btAdminPassword); resp.Status != http.StatusTooManyRequests {
		t.Fatalf("bob's browser logging in as admin at the held-back address: %d, want 429", resp.Status)
	}
	btDo(t, known, "clear the password", chromedp.Clear(chromedp.CSS(`input[name=password]`)))
	if resp := btLogin(t, known, "bob", "bob-password"); resp.Status != http.StatusOK || btLocation(t, known).Path != "/" {
		t.Fatalf("bob in his known browser at the held-back address: %d at %s (%q)", resp.Status, btLocation(t, known), btTexts(t, known, `[data-testid=login-error]`))
	}
	if who := btText(t, known, `.account`); !strings.Contains(who, "bob") {
		t.Errorf("signed in, the header reads %q", who)
	}

	// The new browser still waits: bob's login elsewhere opened nothing.
	btNavigate(t, fresh, p.ts.URL+"/login")
	if resp := btLogin(t, fresh, "bob", "bob-password"); resp.Status != http.StatusTooManyRequests {
		t.Fatalf("the new browser after bob's login elsewhere: %d, want 429", resp.Status)
	}
}
