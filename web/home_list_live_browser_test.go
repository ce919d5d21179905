package web_test

import (
	"context"
	"testing"

	"github.com/chromedp/chromedp"

	"workbench/models"
)

// The home page's list follows its workbenches' states by itself: one
// started elsewhere (the notebook tab's Start, the API, the queue) read
// "stopped" there until a reload.
func TestBrowserHomeListFollowsStates(t *testing.T) {
	p := newPortal(t)
	ctx := context.Background()
	tokenFor(t, p, "alice", "user")
	alice, err := p.srv.Store.UserByUsername(ctx, "alice")
	if err != nil {
		t.Fatal(err)
	}
	wb := p.runningRecord(alice, "exp", models.GPUNeed{})
	if err := p.srv.Store.SetWorkbenchState(ctx, wb.ID, models.StateStopped, 0, "", nil); err != nil {
		t.Fatal(err)
	}
	b := btNewBrowser(t)
	btNavigate(t, b, p.ts.URL+"/login")
	btLogin(t, b, "alice", "alice-password")
	row := `[data-testid=workbench-row][data-id="` + wb.ID + `"]`
	if s, err := chromedp.Run(b, chromedp.Evaluate[string](`document.querySelector(`+btJsString(row)+`).getAttribute("data-state")`)); err != nil || s != models.StateStopped {
		t.Fatalf("row state %q (%v), want stopped", s, err)
	}
	// Started elsewhere: the row follows without a reload.
	if err := p.srv.Store.SetWorkbenchState(ctx, wb.ID, models.StateRunning, 100, "", nil); err != nil {
		t.Fatal(err)
	}
	// Waits for the row to turn running, for a minute at the most (the
	// list looks every 5 seconds; a busy machine may be slow).
	js := `new Promise((res) => {
		const end = Date.now() + 60000;
		const look = () => {
			const r = document.querySelector(` + btJsString(row) + `);
			if (r && r.getAttribute("data-state") === "running") res(true);
			else if (Date.now() > end) res(false);
			else setTimeout(look, 100);
		};
		look();
	})`
	if turned, err := chromedp.Run(b, chromedp.Evaluate[bool](js, chromedp.EvalAwaitPromise)); err != nil || !turned {
		t.Fatalf("the row never turned running (%v)", err)
	}
}
