package web_test

import (
	"context"
	"fmt"
	"net/http"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/chromedp/chromedp"

	"workbench/models"
)

// With JavaScript off, a user does the everyday things by plain form posts
// and reads each result: logs in, creates an API token (the password
// first) and revokes it, adds an SSH key and deletes it, books GPUs,
// launches with the booking (the workbench waits for its window), leaves
// the queue, deletes the workbench and cancels the booking. Where the page
// asks with confirm() before an action that cannot be undone (revoke,
// delete, cancel), the portal asks on a page of its own without script,
// and nothing happens until it is answered; "keep it" leaves everything
// as it was. Deleting an SSH key is asked nowhere, with or without script:
// the key can be added again.
func TestBrowserEverydayFormsWithoutJavaScript(t *testing.T) {
	p := newPortal(t)
	p.addImage(fakeCatalogImage("fake", "example.invalid/fake:1")) // the launch waits in the queue: never pulled
	bg := context.Background()
	alice, err := p.srv.Store.CreateUser(bg, models.NewUser{Username: "alice", Password: "alice-password", Role: "user"})
	if err != nil {
		t.Fatal(err)
	}
	ctx := btNewBrowser(t)
	btDo(t, ctx, "disable JavaScript", btScriptsOff())
	btNavigate(t, ctx, p.ts.URL+"/login")
	if resp := btLogin(t, ctx, "alice", "alice-password"); resp.Status != http.StatusOK || btLocation(t, ctx).Path != "/" {
		t.Fatalf("login: %d at %s", resp.Status, btLocation(t, ctx))
	}
	click := func(what, css string) *http.Response {
		t.Helper()
		btDo(t, ctx, "wait for "+what, chromedp.WaitVisible(chromedp.CSS(css)))
		resp := btSubmit(t, ctx, "click "+what, chromedp.Click(chromedp.CSS(css)))
		return &http.Response{StatusCode: int(resp.Status)}
	}
	flash := func(want string) {
		t.Helper()
		btDo(t, ctx, "wait for the notice", chromedp.WaitVisible(chromedp.CSS(`[data-testid=flash]`)))
		if f := btText(t, ctx, `[data-testid=flash]`); !strings.Contains(f, want) {
			t.Fatalf("the notice reads %q, want %q in it", f, want)
		}
	}
	// asked expects the portal's question page: it says question, and
	// nothing has happened yet (still() says so).
	questions := 0
	asked := func(question string, still func() bool) {
		t.Helper()
		questions++
		if !btVisible(t, ctx, `[data-testid=confirm]`) { // the click's answer has loaded (btSubmit)
			t.Fatalf("no question asked: at %s, the notice reads %q", btLocation(t, ctx), btTexts(t, ctx, `[data-testid=flash]`))
		}
		if q := btText(t, ctx, `[data-testid=confirm-question]`); !strings.Contains(q, question) {
			t.Fatalf("the question reads %q, want %q in it", q, question)
		}
		if !still() {
			t.Fatal("the action was done before the question was answered")
		}
		btScreenshot(t, ctx, fmt.Sprintf("no-javascript-question-%d.png", questions))
	}

	// An API token: created (the password first), then revoked.
	btNavigate(t, ctx, p.ts.URL+"/settings/tokens")
	btDo(t, ctx, "name a token", chromedp.SendKeys(chromedp.CSS(`[data-testid=new-token-form] input[name=name]`), "laptop"))
	resp := btSubmit(t, ctx, "click Create token", chromedp.Click(chromedp.CSS(`[data-testid=new-token-form] button[type=submit]`)))
	if resp = btConfirmSudo(t, ctx, resp, "alice-password"); resp.Status != http.StatusOK {
		t.Fatalf("create a token: %d", resp.Status)
	}
	if s := btText(t, ctx, `[data-testid=new-token-secret]`); !strings.HasPrefix(s, "wbt_") {
		t.Fatalf("the new token's secret reads %q", s)
	}
	tokenActive := func() bool {
		toks, err := p.srv.Store.ListTokens(bg, alice.ID)
		if err != nil {
			t.Fatal(err)
		}
		return len(toks) == 1 && toks[0].RevokedAt == nil
	}
	click("Revoke", `[data-testid=token-revoke]`)
	asked("Revoke the token laptop?", tokenActive)
	btSubmit(t, ctx, "click Keep it", chromedp.Click(chromedp.CSS(`[data-testid=confirm-no]`)))
	if btLocation(t, ctx).Path != "/settings/tokens" || !tokenActive() {
		t.Fatalf("after Keep it: at %s, token active %v", btLocation(t, ctx), tokenActive())
	}
	click("Revoke", `[data-testid=token-revoke]`)
	asked("Revoke the token laptop?", tokenActive)
	click("the question's Revoke", `[data-testid=confirm-yes]`)
	flash("Token revoked.")
	if tokenActive() || len(btTexts(t, ctx, `[data-testid=token-revoke]`)) != 0 {
		t.Fatal("the token is not revoked after the answered question")
	}

	// An SSH key: added (the password confirmed above still holds), deleted.
	btSubmit(t, ctx, "open the SSH keys tab", chromedp.Click(chromedp.CSS(`[data-testid=settings-tabs] [data-testid=ssh-keys-link]`)))
	key, fp := newAuthorizedKey(t, "alice@laptop")
	btDo(t, ctx, "paste a key",
		chromedp.SendKeys(chromedp.CSS(`[data-testid=new-ssh-key-form] input[name=name]`), "laptop"),
		chromedp.SetValue(chromedp.CSS(`[data-testid=new-ssh-key-form] textarea[name=public_key]`), key),
	)
	if resp := click("Add key", `[data-testid=new-ssh-key-form] button[type=submit]`); resp.StatusCode != http.StatusOK {
		t.Fatalf("add a key: %d", resp.StatusCode)
	}
	flash("SSH key added.")
	if got := btText(t, ctx, `[data-testid=ssh-key-fingerprint]`); got != fp {
		t.Fatalf("fingerprint %q, want %q", got, fp)
	}
	click("Delete", `[data-testid=ssh-key-delete]`)
	if !btVisible(t, ctx, `[data-testid=no-ssh-keys]`) {
		t.Fatal("the key is still listed after Delete")
	}

	// A booking 3 hours on, launched with: the workbench waits for it.
	btNavigate(t, ctx, p.ts.URL+"/gpus")
	start := time.Now().UTC().Add(3 * time.Hour).Truncate(time.Hour)
	const layout = "2006-01-02T15:04"
	form := `[data-testid=booking-form] `
	btDo(t, ctx, "fill the booking form",
		chromedp.WaitVisible(chromedp.CSS(`[data-testid=booking-form]`)),
		chromedp.SetValue(chromedp.CSS(form+`select[name=pool]`), resvH100),
		chromedp.SetValue(chromedp.CSS(form+`input[name=units]`), "1"),
		chromedp.SetValue(chromedp.CSS(form+`input[name=starts_at]`), start.Format(layout)),
		chromedp.SetValue(chromedp.CSS(form+`input[name=ends_at]`), start.Add(time.Hour).Format(layout)),
	)
	click("Book", `[data-testid=booking-submit]`)
	flash("Booked #")
	id, err := chromedp.Run(ctx, chromedp.Evaluate[string](`document.querySelector("[data-testid=reservation-row]").dataset.id`))
	if err != nil || id == "" {
		t.Fatalf("no booking listed (%v)", err)
	}
	btNavigate(t, ctx, p.ts.URL+"/workbenches/new")
	btDo(t, ctx, "fill the launch form",
		chromedp.WaitVisible(chromedp.CSS(`[data-testid=launch-form]`)),
		chromedp.Click(chromedp.CSS(`[data-testid=image-choice] input[name=image][value="fake"]`)),
		chromedp.Click(chromedp.CSS(`[data-testid=flavor-choice] input[name=flavor][value="1x H100 80GB HBM3"]`)),
		chromedp.SetValue(chromedp.CSS(`[data-testid=launch-reservation]`), id),
		chromedp.SendKeys(chromedp.CSS(`input[name=name]`), "nojs"),
	)
	click("Launch", `[data-testid=launch-submit]`)
	wbPath := btLocation(t, ctx).Path
	if !strings.HasPrefix(wbPath, "/workbenches/") || wbPath == "/workbenches/new" {
		t.Fatalf("after Launch the browser is at %s", wbPath)
	}
	wbID := strings.TrimPrefix(wbPath, "/workbenches/")
	if state, seen := btWaitWorkbenchState(t, ctx, "queued", 30*time.Second); state != "queued" {
		t.Fatalf("the page shows %q (seen %v), want queued", state, seen)
	}
	click("Leave the queue", `[data-testid=leave-queue]`)
	if state, seen := btWaitWorkbenchState(t, ctx, "stopped", 30*time.Second); state != "stopped" {
		t.Fatalf("after leaving the queue the page shows %q (seen %v), want stopped", state, seen)
	}
	wbExists := func() bool {
		exists, deleted, err := p.srv.Store.WorkbenchExists(bg, wbID)
		if err != nil {
			t.Fatal(err)
		}
		return exists && !deleted
	}
	click("Delete", `[data-testid=delete]`)
	asked("Delete this workbench? Your home volume is kept.", wbExists)
	if s := btText(t, ctx, `[data-testid=confirm-subject]`); s != "Workbench nojs" {
		t.Errorf("the question page names %q, want the workbench", s)
	}
	click("the question's Delete", `[data-testid=confirm-yes]`)
	flash("Workbench nojs deleted; your home data is kept.")
	if btLocation(t, ctx).Path != "/" || wbExists() {
		t.Fatalf("after the answered Delete: at %s, workbench still there %v", btLocation(t, ctx), wbExists())
	}

	// The booking, cancelled from the pool page.
	btNavigate(t, ctx, p.ts.URL+"/gpus")
	booked := func() bool {
		n, _ := strconv.ParseInt(id, 10, 64)
		r, err := p.srv.Store.ReservationByID(bg, n)
		if err != nil {
			t.Fatal(err)
		}
		return r.ReleasedAt == nil
	}
	click("Cancel", `[data-testid=reservation-row][data-id="`+id+`"] [data-testid=reservation-cancel]`)
	asked("Cancel booking #"+id+"?", booked)
	click("the question's Cancel booking", `[data-testid=confirm-yes]`)
	flash("Booking #" + id + " cancelled")
	if rows := btTexts(t, ctx, `[data-testid=reservation-row]`); len(rows) != 0 {
		t.Fatalf("bookings listed after the cancel: %v", rows)
	}
	btScreenshot(t, ctx, "no-javascript-done.png")
}
