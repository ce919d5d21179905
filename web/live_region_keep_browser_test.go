package web_test

import (
	"context"
	"testing"

	"github.com/chromedp/chromedp"

	"workbench/models"
)

// A live region whose refresh brings what it already shows keeps its
// nodes: a text selection in it (a workbench id being copied) survives the
// looks, and a screen reader is not handed the region again every 5 s.
// What changed is still brought in (TestBrowserAdminWorkbenchPageIsLive).
func TestBrowserLiveRegionKeepsItsNodesWhenNothingChanged(t *testing.T) {
	p, b := btAdminIn(t, true)
	ctx := context.Background()
	tokenFor(t, p, "bob", "user")
	bob, _ := p.srv.Store.UserByUsername(ctx, "bob")
	wb := p.runningRecord(bob, "thesis", models.GPUNeed{})
	if err := p.srv.Store.SetWorkbenchState(ctx, wb.ID, models.StateStopped, 0, "", nil); err != nil {
		t.Fatal(err)
	}
	btNavigate(t, b, p.ts.URL+"/workbenches/"+wb.ID)
	if got := btText(t, b, `[data-testid=wb-state]`); got != "stopped" {
		t.Fatalf("the page opens with the state %q", got)
	}
	// Marks the state badge's node and selects its text, then waits for
	// three looks of the region (each one a fetch of the page) and one
	// more so that the last fetch has come back.
	js := `new Promise((res) => {
		const region = document.querySelector("[data-live]");
		const badge = document.querySelector("[data-testid=wb-state]");
		badge.wbMark = true;
		const range = document.createRange();
		range.selectNodeContents(badge);
		getSelection().removeAllRanges();
		getSelection().addRange(range);
		const ticks = () => parseInt(region.getAttribute("data-live-ticks") || "0", 10);
		const start = ticks();
		const look = () => {
			if (ticks() < start + 4) { setTimeout(look, 100); return; }
			const now = document.querySelector("[data-testid=wb-state]");
			res((now && now.wbMark === true ? "same node" : "replaced") + ", selection " + JSON.stringify(getSelection().toString().trim()));
		};
		look();
	})`
	got, err := chromedp.Run(b, chromedp.Evaluate[string](js, chromedp.EvalAwaitPromise))
	if err != nil {
		t.Fatal(err)
	}
	if got != `same node, selection "stopped"` {
		t.Errorf("after the region's looks with nothing changed: %s", got)
	}
}
