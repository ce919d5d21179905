package web_test

import (
	"context"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/chromedp/cdproto/cdp"
	"github.com/chromedp/cdproto/network"
	"github.com/chromedp/cdproto/target"
	"github.com/chromedp/chromedp"

	"workbench/handlers"
	"workbench/web"
)

// In Chromium, with the notebook domain set: alice clicks "Open JupyterLab"
// on the portal (portal.localhost), a new tab lands on her workbench's own
// origin ({id}.nb.localhost) through a one-time code; the portal's cookie
// never reaches that host (checked at the server), the link cannot be used
// twice, and logging out of the portal ends the notebook session.
func TestBrowserNotebookDomain(t *testing.T) {
	np := newNBPortal(t)
	aliceTok := tokenFor(t, np.testPortal, "alice", "user")
	code, wb := np.api("POST", "/api/v1/workbenches", aliceTok, `{"name":"nbdomain","image":"fake","flavor":"CPU small"}`)
	if code != 202 {
		t.Fatalf("launch: %d %v", code, wb)
	}
	id := wb["id"].(string)
	waitState(t, np.testPortal, aliceTok, id, "running")

	ctx := btNewBrowser(t)
	btNavigate(t, ctx, np.portal+"/login")
	if resp := btLogin(t, ctx, "alice", "alice-password"); resp.Status != http.StatusOK {
		t.Fatalf("login: %d", resp.Status)
	}
	btNavigate(t, ctx, np.portal+"/workbenches/"+id)
	nbOrigin := np.nbOrigin(id)
	// The tab goes portal → notebook host (state cookie) → portal (code) →
	// notebook host (exchange) by itself.
	newTab := chromedp.WaitNewTarget(ctx, func(i *target.Info) bool { return strings.HasPrefix(i.URL, nbOrigin) })
	btDo(t, ctx, "click Open JupyterLab", chromedp.Click(chromedp.CSS(`[data-testid=open-jupyter]`)))
	var tid target.ID
	select {
	case tid = <-newTab:
	case <-time.After(30 * time.Second):
		t.Fatal("no tab opened on the notebook's origin")
	}
	tab, cancel := chromedp.NewContext(ctx, chromedp.WithTargetID(tid))
	defer cancel()
	deadline := time.Now().Add(30 * time.Second)
	for {
		txt, _ := chromedp.Run(tab, chromedp.Evaluate[string](`document.body ? document.body.innerText : ""`))
		if strings.Contains(txt, "Fake JupyterLab") {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("the notebook tab shows %q", txt)
		}
		time.Sleep(100 * time.Millisecond)
	}
	loc := btLocation(t, tab)
	if loc.Scheme+"://"+loc.Host != nbOrigin || loc.Path != "/wb/"+id+"/lab" || loc.RawQuery != "" {
		t.Fatalf("the notebook tab is at %s, want %s/wb/%s/lab (no code left in the URL)", loc, nbOrigin, id)
	}
	btScreenshot(t, tab, "notebook-domain.png")

	// What the browser holds for the notebook origin: its own cookie only.
	var got network.GetCookiesResult
	btDo(t, tab, "read the cookies of the notebook origin", chromedp.Func(func(ctx context.Context, tg *chromedp.Target) error {
		r, err := cdp.Call(ctx, tg, network.GetCookies, network.GetCookiesParams{URLs: []string{nbOrigin + "/wb/" + id + "/"}})
		got = r
		return err
	}))
	names := map[string]bool{}
	for _, c := range got.Cookies {
		names[c.Name] = true
	}
	if names[web.SessionCookieName] || !names[handlers.NotebookCookieName] {
		t.Fatalf("cookies the browser sends to the notebook origin: %v; want %s and not %s", names, handlers.NotebookCookieName, web.SessionCookieName)
	}

	// At the server: every request to the notebook host came without the
	// portal's cookie, and the notebook's own cookie was used.
	np.mu.Lock()
	var openURL string
	sawNB := false
	for _, r := range np.nbSeen {
		if _, err := r.Cookie(web.SessionCookieName); err == nil {
			t.Errorf("the portal session cookie reached the notebook host: %s", r.URL)
		}
		if _, err := r.Cookie(handlers.NotebookCookieName); err == nil {
			sawNB = true
		}
		if r.URL.Path == "/_workbench/open" {
			openURL = nbOrigin + r.URL.RequestURI()
		}
	}
	np.mu.Unlock()
	if !sawNB || openURL == "" {
		t.Fatalf("the notebook host saw no code exchange (%q) or no notebook cookie (%v)", openURL, sawNB)
	}

	// The one-time link does not work twice.
	if resp := btNavigate(t, ctx, openURL); resp.Status != http.StatusForbidden {
		t.Fatalf("the used link again: status %d, want 403", resp.Status)
	}
	if msg := btText(t, ctx, `[data-testid=notebook-message]`); !strings.Contains(msg, "already used") {
		t.Errorf("reused link message: %q", msg)
	}

	// Another user's code (bob's, for his own workbench) does not open
	// alice's workbench host.
	tokenFor(t, np.testPortal, "bob", "user")
	bob, _ := np.srv.Store.UserByUsername(context.Background(), "bob")
	bobsCode, err := np.srv.Store.CreateNotebookCode(context.Background(), bob.ID, "bobswb", "bobs-session", "bobs-browser", time.Minute)
	if err != nil {
		t.Fatal(err)
	}
	if resp := btNavigate(t, tab, nbOrigin+"/_workbench/open?code="+bobsCode+"&path=/wb/"+id+"/lab"); resp.Status != http.StatusForbidden {
		t.Fatalf("bob's code on alice's workbench host: status %d, want 403", resp.Status)
	}

	// Log out of the portal: the notebook tab loses its session, and the
	// notebook's address leads to the portal's sign-in, not the notebook.
	btNavigate(t, ctx, np.portal+"/")
	btSubmit(t, ctx, "click Log out", chromedp.Click(chromedp.CSS(`.account form[action="/logout"] button`)))
	btNavigate(t, tab, nbOrigin+"/wb/"+id+"/lab")
	if loc := btLocation(t, tab); loc.Host != strings.TrimPrefix(np.portal, "http://") || loc.Path != "/login" {
		t.Fatalf("the notebook after logging out of the portal: at %s, want the portal's sign-in", loc)
	}
	// Signing in there (as from a bookmark of the notebook) lands in the
	// notebook: the login form's redirects end on the notebook's host,
	// which the portal's form-action must allow (Chromium stopped them and
	// left a blank login page, the user signed in without knowing it).
	btLogin(t, tab, "alice", "alice-password")
	for deadline := time.Now().Add(30 * time.Second); ; time.Sleep(100 * time.Millisecond) {
		loc := btLocation(t, tab)
		txt, _ := chromedp.Run(tab, chromedp.Evaluate[string](`document.body ? document.body.innerText : ""`))
		if loc.Scheme+"://"+loc.Host == nbOrigin && strings.Contains(txt, "Fake JupyterLab") {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("after signing in from the notebook's address the tab is at %s showing %q, want the notebook", loc, txt)
		}
	}
	np.srv.Manager.Wait()
}
