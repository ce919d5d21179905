package web_test

import (
	"context"
	"net/http"
	"testing"

	"github.com/chromedp/chromedp"

	"workbench/models"
)

// The owner types Jupyter's own port into Extra ports and clicks Add port:
// the page says why, in words (once it printed a literal "/wb/{id}/"),
// and nothing is saved. With JavaScript on and off.
func TestBrowserAddingJupytersPortIsExplained(t *testing.T) {
	for _, js := range []bool{true, false} {
		t.Run(jsName(js), func(t *testing.T) { addJupytersPort(t, js) })
	}
}

func addJupytersPort(t *testing.T, js bool) {
	p := newPortal(t)
	ctx := btNewBrowser(t) // closed before the portal
	if !js {
		btDo(t, ctx, "disable JavaScript", btScriptsOff())
	}
	bg := context.Background()
	lin, err := p.srv.Store.CreateUser(bg, models.NewUser{Username: "lin", Password: "lin-password-1", Role: models.RoleUser})
	if err != nil {
		t.Fatal(err)
	}
	wb := p.runningRecord(lin, "ports", models.GPUNeed{})
	btNavigate(t, ctx, p.ts.URL+"/workbenches/"+wb.ID)
	btLogin(t, ctx, "lin", "lin-password-1")
	btDo(t, ctx, "open Extra ports and type 8888",
		chromedp.Click(chromedp.CSS(`[data-testid=user-ports] summary`)),
		chromedp.WaitVisible(chromedp.CSS(`[data-testid=user-port-input]`)),
		chromedp.SendKeys(chromedp.CSS(`[data-testid=user-port-input]`), "8888"),
	)
	if resp := btSubmit(t, ctx, "click Add port", chromedp.Click(chromedp.CSS(`[data-testid=user-port-add]`))); resp.Status != http.StatusOK {
		t.Fatalf("Add port: status %d at %s", resp.Status, resp.URL)
	}
	want := "Could not change the ports: port 8888 is the workbench's own app (Jupyter) — its Open button reaches it."
	if got := btText(t, ctx, `[data-testid=flash][data-kind=error]`); got != want {
		t.Fatalf("the page says %q, want %q", got, want)
	}
	if got, err := p.srv.Store.WorkbenchByID(bg, wb.ID); err != nil || len(got.ExtraPorts) != 0 {
		t.Fatalf("ports after the refusal: %v (%v)", got.ExtraPorts, err)
	}
}
