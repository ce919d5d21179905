package web_test

import (
	"context"
	"testing"

	"github.com/chromedp/chromedp"

	"workbench/models"
)

// In Chromium, the administrator's view of bob's running workbench follows
// it without a reload: bob stops it, and the page's live region (state,
// actions, cost, deadlines, GPU telemetry) turns to "stopped" and drops the
// Stop button, the document the same one. Its refetches of the page are
// the look already recorded: one audit row however many ticks; and what
// they bring in holds nothing that enters the notebook.
func TestBrowserAdminWorkbenchPageIsLive(t *testing.T) {
	p, b := btAdminIn(t, true)
	ctx := context.Background()
	tokenFor(t, p, "bob", "user")
	bob, _ := p.srv.Store.UserByUsername(ctx, "bob")
	wb := p.runningRecord(bob, "thesis", models.GPUNeed{})

	btNavigate(t, b, p.ts.URL+"/workbenches/"+wb.ID)
	if got := btText(t, b, `[data-testid=wb-status] [data-testid=wb-state]`); got != "running" {
		t.Fatalf("the page opens with the state %q", got)
	}
	if n := len(btTexts(t, b, `[data-testid=admin-stop]`)); n != 1 {
		t.Fatalf("%d Stop buttons on a running workbench's page", n)
	}
	if _, err := chromedp.Run(b, chromedp.Evaluate[bool](`window.sameDocument = true`)); err != nil {
		t.Fatal(err)
	}

	// Bob stops it (his page's Stop; the state is what the page reads).
	if err := p.srv.Store.SetWorkbenchState(ctx, wb.ID, models.StateStopped, 0, "", nil); err != nil {
		t.Fatal(err)
	}
	// Waits, a minute at the most (a look every 5 s; a busy machine may
	// be slow), for the region to say Stopped, and two looks more.
	js := `new Promise((res) => {
		const end = Date.now() + 60000;
		const region = document.querySelector("[data-live]");
		let settledAt = -1;
		const look = () => {
			const st = document.querySelector("[data-testid=wb-status]");
			const ticks = region ? parseInt(region.getAttribute("data-live-ticks") || "0", 10) : 0;
			if (settledAt < 0 && st && st.getAttribute("data-state") === "stopped") settledAt = ticks;
			if (settledAt >= 0 && ticks >= settledAt + 2) res("stopped");
			else if (Date.now() > end) res(st ? st.getAttribute("data-state") : "none");
			else setTimeout(look, 100);
		};
		look();
	})`
	state, err := chromedp.Run(b, chromedp.Evaluate[string](js, chromedp.EvalAwaitPromise))
	if err != nil || state != models.StateStopped {
		t.Fatalf("the page still says %q a minute after bob stopped it (%v)", state, err)
	}
	if same, err := chromedp.Run(b, chromedp.Evaluate[bool](`window.sameDocument === true`)); err != nil || !same {
		t.Errorf("the page reloaded to show the stop (%v)", err)
	}
	if got := btText(t, b, `[data-testid=wb-state]`); got != "stopped" {
		t.Errorf("the badge says %q", got)
	}
	if n := len(btTexts(t, b, `[data-testid=admin-stop]`)); n != 0 {
		t.Errorf("%d Stop buttons on the stopped workbench's page", n)
	}
	if n := len(btTexts(t, b, `[data-testid=open-jupyter], [data-testid=ssh-command], [data-testid=follow-logs], [data-testid=start], [data-testid=delete]`)); n != 0 {
		t.Errorf("%d of the owner's ways into the notebook or actions after the refresh", n)
	}
	rows, total, err := p.srv.Store.AuditPage(ctx, models.ActionViewAsAdmin, "", 0, 100)
	if err != nil || total != 1 || rows[0].Actor != "admin" || rows[0].Target != wb.ID {
		t.Errorf("view rows after the page's refetches: %d %+v %v, want admin's one", total, rows, err)
	}
}
