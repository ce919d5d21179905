package web_test

import (
	"context"
	"net/http"
	"strings"
	"testing"

	"github.com/chromedp/cdproto/network"
	"github.com/chromedp/chromedp"
)

// btQueueOrder is the admin queue's workbench ids as the tab shows them.
func btQueueOrder(t *testing.T, ctx context.Context) []string {
	t.Helper()
	ids, err := chromedp.Run(ctx, chromedp.Evaluate[[]string](
		`Array.from(document.querySelectorAll("[data-testid=queue-row]"), r => r.getAttribute("data-id"))`))
	if err != nil {
		t.Fatalf("queue order: %v", err)
	}
	return ids
}

// btChecked reports whether the checkbox matching css is checked.
func btChecked(t *testing.T, ctx context.Context, css string) bool {
	t.Helper()
	on, err := chromedp.Run(ctx, chromedp.Evaluate[bool](`document.querySelector(`+btJsString(css)+`).checked`))
	if err != nil {
		t.Fatalf("checked %s: %v", css, err)
	}
	return on
}

// btValue is the value of the input matching css.
func btValue(t *testing.T, ctx context.Context, css string) string {
	t.Helper()
	v, err := chromedp.Run(ctx, chromedp.Value(chromedp.CSS(css)))
	if err != nil {
		t.Fatalf("value of %s: %v", css, err)
	}
	return v
}

// btMoveToFront types 1 in the position box of queued request id on the
// open admin queue and clicks its Move, confirming the password the first
// change asks for; it returns the page the move leads to.
func btMoveToFront(t *testing.T, ctx context.Context, id string) *network.Response {
	t.Helper()
	row := `[data-testid=queue-row][data-id="` + id + `"]`
	btDo(t, ctx, "type position 1",
		chromedp.Clear(chromedp.CSS(row+` [data-testid=queue-move-position]`)),
		chromedp.SendKeys(chromedp.CSS(row+` [data-testid=queue-move-position]`), "1"),
	)
	resp := btSubmit(t, ctx, "click Move", chromedp.Click(chromedp.CSS(row+` [data-testid=queue-move]`)))
	return btConfirmSudo(t, ctx, resp, btAdminPassword)
}

// An admin types 1 in the second queued request's position box and clicks
// Move (confirming the password first): the queue page comes back with
// that request on top and a flash saying so. With JavaScript and without.
func TestBrowserAdminQueueMove(t *testing.T) {
	for _, js := range []bool{true, false} {
		t.Run(jsName(js), func(t *testing.T) { testBrowserAdminQueueMove(t, js) })
	}
}

func testBrowserAdminQueueMove(t *testing.T, js bool) {
	p, _ := enginePortal(t)
	first, second := queueTwo(t, p)
	ctx := btSignedIn(t, js, p.ts.URL, "admin", btAdminPassword)
	btNavigate(t, ctx, p.ts.URL+"/admin/queue")
	if got := btQueueOrder(t, ctx); len(got) != 2 || got[0] != first || got[1] != second {
		t.Fatalf("order before: %v", got)
	}
	resp := btMoveToFront(t, ctx, second)
	if resp.Status != http.StatusOK || btLocation(t, ctx).Path != "/admin/queue" {
		t.Fatalf("after Move: %d at %s", resp.Status, btLocation(t, ctx))
	}
	if flash := btText(t, ctx, `[data-testid=flash]`); !strings.Contains(flash, "Moved second to position 1") {
		t.Errorf("flash %q", flash)
	}
	if got := btQueueOrder(t, ctx); len(got) != 2 || got[0] != second || got[1] != first {
		t.Fatalf("order after the move: %v", got)
	}
	btScreenshot(t, ctx, "admin-queue-move-"+jsName(js)+".png")
}

// An admin opens Admin → Reservations, ticks "bill reserved-but-unused
// time" and saves (the store has it on), adds a cap for alice (a mistyped
// name first: shown beside the field, the input kept), changes it on its
// row, and unticks the setting again. With JavaScript and without.
func TestBrowserAdminReservations(t *testing.T) {
	for _, js := range []bool{true, false} {
		t.Run(jsName(js), func(t *testing.T) { testBrowserAdminReservations(t, js) })
	}
}

func testBrowserAdminReservations(t *testing.T, js bool) {
	p := newPortal(t)
	bg := context.Background()
	tokenFor(t, p, "alice", "user")
	ctx := btNewBrowser(t)
	if !js {
		btDo(t, ctx, "disable JavaScript", btScriptsOff())
	}
	btLoginAsAdmin(t, ctx, p.ts.URL)
	btNavigate(t, ctx, p.ts.URL+"/admin/users")
	btSubmit(t, ctx, "click the Reservations tab", chromedp.Click(chromedp.CSS(`nav.tabs a[href="/admin/reservations"]`)))
	if got := btText(t, ctx, "h1"); got != "Reservations" {
		t.Fatalf("heading %q", got)
	}
	box := `[data-testid=reservation-bill-unused]`
	if btChecked(t, ctx, box) {
		t.Fatal("billing of unused time is on by default")
	}
	btDo(t, ctx, "tick the box", chromedp.Click(chromedp.CSS(box)))
	resp := btSubmit(t, ctx, "save the setting", chromedp.Click(chromedp.CSS(`[data-testid=reservation-settings-save]`)))
	resp = btConfirmSudo(t, ctx, resp, btAdminPassword)
	if resp.Status != http.StatusOK || btLocation(t, ctx).Path != "/admin/reservations" {
		t.Fatalf("after saving: %d at %s", resp.Status, btLocation(t, ctx))
	}
	if on, err := p.srv.Store.ReservationBillUnused(bg); err != nil || !on || !btChecked(t, ctx, box) {
		t.Fatalf("setting after the tick: store %v (%v), page %v", on, err, btChecked(t, ctx, box))
	}

	// A cap for a user who does not exist: refused beside the name.
	btDo(t, ctx, "fill the cap form",
		chromedp.SetValue(chromedp.CSS(`[data-testid=reservation-cap-scope]`), "user"),
		chromedp.SendKeys(chromedp.CSS(`[data-testid=reservation-cap-name]`), "alicia"),
		chromedp.SendKeys(chromedp.CSS(`[data-testid=reservation-cap-new-hours]`), "12"),
	)
	resp = btSubmit(t, ctx, "add the cap", chromedp.Click(chromedp.CSS(`[data-testid=reservation-cap-add]`)))
	if resp.Status != http.StatusBadRequest {
		t.Fatalf("unknown user: status %d", resp.Status)
	}
	if msg := btText(t, ctx, `[data-testid=error-name]`); !strings.Contains(msg, `"alicia"`) {
		t.Errorf("error %q", msg)
	}
	if v := btValue(t, ctx, `[data-testid=reservation-cap-new-hours]`); v != "12" {
		t.Errorf("hours not kept: %q", v)
	}
	btDo(t, ctx, "fix the name",
		chromedp.Clear(chromedp.CSS(`[data-testid=reservation-cap-name]`)),
		chromedp.SendKeys(chromedp.CSS(`[data-testid=reservation-cap-name]`), "alice"),
	)
	resp = btSubmit(t, ctx, "add the cap", chromedp.Click(chromedp.CSS(`[data-testid=reservation-cap-add]`)))
	row := `[data-testid=reservation-cap-row][data-scope=user][data-name=alice]`
	if resp.Status != http.StatusOK || btValue(t, ctx, row+` [data-testid=reservation-cap-hours]`) != "12" {
		t.Fatalf("after adding: %d", resp.Status)
	}
	btDo(t, ctx, "change alice's cap on its row",
		chromedp.Clear(chromedp.CSS(row+` [data-testid=reservation-cap-hours]`)),
		chromedp.SendKeys(chromedp.CSS(row+` [data-testid=reservation-cap-hours]`), "20"),
	)
	resp = btSubmit(t, ctx, "save the row", chromedp.Click(chromedp.CSS(row+` [data-testid=reservation-cap-save]`)))
	if resp.Status != http.StatusOK || btValue(t, ctx, row+` [data-testid=reservation-cap-hours]`) != "20" {
		t.Fatalf("after editing: %d", resp.Status)
	}
	if flash := btText(t, ctx, `[data-testid=flash]`); !strings.Contains(flash, "user alice is 20 unit-hours") {
		t.Errorf("flash %q", flash)
	}
	caps, err := p.srv.Store.ReservationCaps(bg)
	if err != nil || len(caps) != 1 || caps[0].Scope != "user" || caps[0].UnitHoursPerWeek != 20 {
		t.Fatalf("stored caps %+v (%v)", caps, err)
	}
	btScreenshot(t, ctx, "admin-reservations-"+jsName(js)+".png")

	btDo(t, ctx, "untick the box", chromedp.Click(chromedp.CSS(box)))
	btSubmit(t, ctx, "save the setting", chromedp.Click(chromedp.CSS(`[data-testid=reservation-settings-save]`)))
	if on, err := p.srv.Store.ReservationBillUnused(bg); err != nil || on || btChecked(t, ctx, box) {
		t.Fatalf("setting after the untick: store %v (%v)", on, err)
	}
}

// An admin opens Admin → What if, asks for 99 GPUs (refused beside the
// field, the input kept), then leaves queue-fifo out and splits the first
// GPU into MIG 3g.40gb: the page shows a row per chosen policy and the
// chart. With JavaScript and without.
func TestBrowserAdminSimulate(t *testing.T) {
	for _, js := range []bool{true, false} {
		t.Run(jsName(js), func(t *testing.T) { testBrowserAdminSimulate(t, js) })
	}
}

func testBrowserAdminSimulate(t *testing.T, js bool) {
	p := newPortal(t)
	tokenFor(t, p, "alice", "user")
	seedLedgerRuns(t, p, "alice", 3)
	ctx := btNewBrowser(t)
	if !js {
		btDo(t, ctx, "disable JavaScript", btScriptsOff())
	}
	btLoginAsAdmin(t, ctx, p.ts.URL)
	btNavigate(t, ctx, p.ts.URL+"/admin/users")
	btSubmit(t, ctx, "click the What if tab", chromedp.Click(chromedp.CSS(`nav.tabs a[href="/admin/simulate"]`)))
	btDo(t, ctx, "ask for 99 GPUs", chromedp.SendKeys(chromedp.CSS(`[data-testid=simulate-gpus]`), "99"))
	resp := btSubmit(t, ctx, "run", chromedp.Click(chromedp.CSS(`[data-testid=simulate-run]`)))
	if resp.Status != http.StatusBadRequest || !btVisible(t, ctx, `[data-testid=error-gpus]`) || btVisible(t, ctx, `[data-testid=simulate-result]`) {
		t.Fatalf("99 GPUs: status %d", resp.Status)
	}
	if v := btValue(t, ctx, `[data-testid=simulate-gpus]`); v != "99" {
		t.Errorf("GPUs not kept: %q", v)
	}
	btDo(t, ctx, "fix the form",
		chromedp.Clear(chromedp.CSS(`[data-testid=simulate-gpus]`)),
		chromedp.Click(chromedp.CSS(`[data-testid=simulate-policy-queue-fifo]`)),
		chromedp.Clear(chromedp.CSS(`[data-testid=simulate-mig-gpus]`)),
		chromedp.SendKeys(chromedp.CSS(`[data-testid=simulate-mig-gpus]`), "1"),
	)
	resp = btSubmit(t, ctx, "run", chromedp.Click(chromedp.CSS(`[data-testid=simulate-run]`)))
	if resp.Status != http.StatusOK {
		t.Fatalf("run: status %d", resp.Status)
	}
	btDo(t, ctx, "wait for the table", chromedp.WaitVisible(chromedp.CSS(`[data-testid=simulate-table]`)))
	pols := btTexts(t, ctx, `[data-testid=simulate-row] td:first-child`)
	if strings.Join(pols, ",") != "exclusive-reject,queue-fair,fair+preempt+sharing" {
		t.Fatalf("policies in the table: %v", pols)
	}
	if sum := btText(t, ctx, `[data-testid=simulate-summary]`); !strings.Contains(sum, "3 runs") || !strings.Contains(sum, "0:3g.40gb") {
		t.Errorf("summary %q", sum)
	}
	if !btVisible(t, ctx, `[data-testid=simulate-chart] svg`) {
		t.Error("no chart")
	}
	if btChecked(t, ctx, `[data-testid=simulate-policy-queue-fifo]`) || !btChecked(t, ctx, `[data-testid=simulate-policy-queue-fair]`) {
		t.Error("the policy choice was not kept")
	}
	btScreenshot(t, ctx, "admin-simulate-"+jsName(js)+".png")
}
