package web_test

import (
	"context"
	"net/http"
	"strings"
	"testing"

	"github.com/chromedp/chromedp"

	"workbench/models"
	"workbench/web"
)

// A user whose GPU watch fired (and who has a notice about her own
// workbench) sees the count in the top bar on any page,
// clicks Notifications, reads them there, follows the workbench notice's
// "View workbench" to its page, and the count is gone on the next
// page. The launch form shows a flavor her quota does not allow disabled
// with the reason, and clicking it leaves the flavor she had. With
// JavaScript on and off: all of it is links, forms and disabled inputs.
func TestBrowserNotificationsLinkAndQuotaDisabledFlavor(t *testing.T) {
	for _, js := range []bool{true, false} {
		t.Run(jsName(js), func(t *testing.T) {
			p := newPortal(t)
			ctx := context.Background()
			st := p.srv.Store
			alice, err := st.CreateUser(ctx, models.NewUser{Username: "alice", Password: "alice-password", Role: "user"})
			if err != nil {
				t.Fatal(err)
			}
			const model = "NVIDIA H100 80GB HBM3"
			w, err := st.CreateGPUWatch(ctx, alice.ID, model, []string{model})
			if err != nil {
				t.Fatal(err)
			}
			if fired, err := st.FireGPUWatch(ctx, w.ID, "A GPU of model "+model+" is free now (1 free). Launch a workbench before someone else takes it.", "/workbenches/new"); err != nil || !fired {
				t.Fatalf("fire the watch: %v %v", fired, err)
			}
			// A notice about one of her workbenches (a queued launch that
			// started, as the orchestrator writes it).
			imgs, err := st.ListImages(ctx, true)
			if err != nil || len(imgs) == 0 {
				t.Fatalf("images: %v", err)
			}
			fl, err := st.FlavorByNameOrID(ctx, "CPU small")
			if err != nil {
				t.Fatal(err)
			}
			wb := &models.Workbench{Name: "waited", OwnerID: alice.ID, ImageID: imgs[0].ID, FlavorID: fl.ID, Token: "t"}
			if err := st.EnqueueWorkbench(ctx, wb, nil); err != nil {
				t.Fatal(err)
			}
			if err := st.AddNotification(ctx, alice.ID, "Workbench waited is running: it started after 2m0s in the queue.", "/workbenches/"+wb.ID); err != nil {
				t.Fatal(err)
			}
			if err := st.SetQuota(ctx, models.ScopeUser, alice.ID, models.Limits{AllowedFlavors: []string{"CPU small", "1x H100 80GB HBM3"}}, "admin"); err != nil {
				t.Fatal(err)
			}

			b := btSignedIn(t, js, p.ts.URL, "alice", "alice-password")
			btNavigate(t, b, p.ts.URL+"/gpus")
			if got := btText(t, b, `[data-testid=notifications-unread]`); got != "2" {
				t.Fatalf("unread count on /gpus %q, want 2", got)
			}
			btSubmit(t, b, "click Notifications", chromedp.Click(chromedp.CSS(`[data-testid=notifications-link]`)))
			if p := btLocation(t, b).Path; p != "/notifications" {
				t.Fatalf("the Notifications link led to %s", p)
			}
			if got := btTexts(t, b, `[data-testid=notification]`); len(got) != 2 {
				t.Fatalf("notifications shown: %q", got)
			}
			// This portal has no SMTP server: the email choice says so.
			if got := btText(t, b, `[data-testid=email-notices-hint]`); got != "This portal sends no email (its operator has not set it up): notices appear here only." {
				t.Errorf("email hint without SMTP %q", got)
			}
			// The workbench notice (the newest, first) leads to its page.
			first := `[data-testid=notification]:first-child [data-testid=notification-link]`
			if got := btText(t, b, first); got != "View workbench" {
				t.Fatalf("the workbench notice's link reads %q", got)
			}
			btSubmit(t, b, "click View workbench", chromedp.Click(chromedp.CSS(first)))
			if p := btLocation(t, b).Path; p != "/workbenches/"+wb.ID {
				t.Fatalf("View workbench led to %s", p)
			}

			btNavigate(t, b, p.ts.URL+"/workbenches/new")
			if btVisible(t, b, `[data-testid=notifications-unread]`) {
				t.Error("the unread count is still shown after the notifications were read")
			}
			two := `[data-testid=flavor-choice] input[value="2x H100 80GB HBM3"]`
			if !btVisible(t, b, `[data-testid=flavor-choice].disabled input[value="2x H100 80GB HBM3"]`) {
				t.Fatal("the 2-GPU flavor her quota does not allow is not shown disabled")
			}
			before, err := chromedp.Run(b, chromedp.Evaluate[string](`document.querySelector('input[name=flavor]:checked').value`))
			if err != nil {
				t.Fatal(err)
			}
			btDo(t, b, "click the disallowed flavor", chromedp.Click(chromedp.CSS(two)))
			after, err := chromedp.Run(b, chromedp.Evaluate[string](`document.querySelector('input[name=flavor]:checked').value`))
			if err != nil || after != before || after == "2x H100 80GB HBM3" {
				t.Fatalf("after clicking the disallowed flavor the choice is %q (was %q): %v", after, before, err)
			}
		})
	}
}

// A user turns the email of her workbench notices off on the Notifications
// page (untick, Save) and on again, with JavaScript on and off: the choice
// is saved, audited and shown. Where the portal sends no email, or her
// account has no address, the page says so beside the box.
func TestBrowserEmailNoticesChoice(t *testing.T) {
	for _, js := range []bool{true, false} {
		t.Run(jsName(js), func(t *testing.T) {
			p := newPortal(t, func(c *web.Config) { c.SMTPAddr, c.SMTPFrom = "127.0.0.1:1", "portal@example.org" })
			ctx := context.Background()
			st := p.srv.Store
			alice, err := st.CreateUser(ctx, models.NewUser{Username: "alice", Email: "alice@example.org", Password: "alice-password", Role: "user"})
			if err != nil {
				t.Fatal(err)
			}
			if _, err := st.CreateUser(ctx, models.NewUser{Username: "bob", Password: "bob-password", Role: "user"}); err != nil {
				t.Fatal(err)
			}
			b := btSignedIn(t, js, p.ts.URL, "alice", "alice-password")
			btNavigate(t, b, p.ts.URL+"/notifications")
			const box = `[data-testid=email-notices-check]`
			if !btChecked(t, b, box) || btVisible(t, b, `[data-testid=email-notices-hint]`) {
				t.Fatal("a new account's workbench notices are not emailed, or a hint shows though she has an address")
			}
			saved := func(want bool) {
				t.Helper()
				btDo(t, b, "click the email box", chromedp.Click(chromedp.CSS(box)))
				btSubmit(t, b, "click Save", chromedp.Click(chromedp.CSS(`[data-testid=email-notices-submit]`)))
				if got := btChecked(t, b, box); got != want {
					t.Fatalf("after Save the box is checked=%v, want %v", got, want)
				}
				if u, err := st.UserByID(ctx, alice.ID); err != nil || u.EmailWorkbenchNotices != want {
					t.Fatalf("saved choice %v (%v), want %v", u.EmailWorkbenchNotices, err, want)
				}
				if !btVisible(t, b, `[data-testid=flash]`) {
					t.Error("no confirmation after Save")
				}
			}
			saved(false)
			saved(true)
			if es, _ := st.ListAudit(ctx, 5); len(es) < 2 || es[0].Action != "user.email_notices" || es[0].Actor != "alice" {
				t.Errorf("audit %+v", es)
			}

			// bob has no address: the page says what to do (read, not clicked).
			bob := p.client()
			p.login(bob, "bob", "bob-password")
			_, page := p.get(bob, "/notifications")
			if got := strings.TrimSpace(mpDoc(t, page).Find(`[data-testid=email-notices-hint]`).Text()); got != "Your account has no email address: ask an administrator to add one." {
				t.Errorf("bob's hint %q", got)
			}
		})
	}
}

// btSignedIn is a new browser, with JavaScript on or off, signed in to the
// portal at base as username.
func btSignedIn(t *testing.T, js bool, base, username, password string) context.Context {
	t.Helper()
	b := btNewBrowser(t)
	if !js {
		btDo(t, b, "disable JavaScript", btScriptsOff())
	}
	btNavigate(t, b, base+"/login")
	if resp := btLogin(t, b, username, password); resp.Status != http.StatusOK {
		t.Fatalf("%s login: status %d", username, resp.Status)
	}
	return b
}
