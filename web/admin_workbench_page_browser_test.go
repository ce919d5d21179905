package web_test

import (
	"context"
	"net/http"
	"slices"
	"testing"
	"time"

	"github.com/chromedp/chromedp"

	"workbench/models"
)

// In Chromium, JavaScript on: the administrator clicks bob's workbench on
// /admin/workbenches, reads whose it is on its page, clicks Stop, answers
// the question and confirms the password, and is back on the page with
// the workbench stopped.
func TestBrowserAdminStopsFromUsersWorkbenchPage(t *testing.T) {
	p, b := btAdminIn(t, true)
	ctx := context.Background()
	tokenFor(t, p, "bob", "user")
	bob, _ := p.srv.Store.UserByUsername(ctx, "bob")
	wb := p.runningRecord(bob, "thesis", models.GPUNeed{})
	asked := btAcceptDialogs(t, b)

	btNavigate(t, b, p.ts.URL+"/admin/workbenches")
	link := `[data-testid=workbench-row][data-id="` + wb.ID + `"] [data-testid=wb-admin-view]`
	if n := len(btTexts(t, b, link)); n != 1 {
		t.Fatalf("bob's row has %d links to his workbench's page, want 1", n)
	}
	resp := btSubmit(t, b, "click bob's workbench on the list",
		chromedp.Click(chromedp.CSS(link)))
	if resp.Status != http.StatusOK || btLocation(t, b).Path != "/workbenches/"+wb.ID {
		t.Fatalf("the row's link led to %s (%d)", resp.URL, resp.Status)
	}
	if got := btText(t, b, `[data-testid=admin-view-owner]`); got != "bob's workbench" {
		t.Errorf("the banner names %q", got)
	}
	if n := len(btTexts(t, b, `[data-testid=open-jupyter], [data-testid=ssh-command], [data-testid=follow-logs]`)); n != 0 {
		t.Errorf("%d ways into the notebook on the administrator's page", n)
	}
	resp = btSubmit(t, b, "click Stop", chromedp.Click(chromedp.CSS(`[data-testid=admin-stop]`)))
	btConfirmSudo(t, b, resp, btAdminPassword)
	if path := btLocation(t, b).Path; path != "/workbenches/"+wb.ID {
		t.Fatalf("after the stop the browser is at %s, want the workbench's page", path)
	}
	if state := btWaitSettled(t, b, 30*time.Second); state != models.StateStopped {
		t.Errorf("the page shows %s after the stop", state)
	}
	if msg := btText(t, b, `[data-testid=flash]`); msg != "Workbench thesis stopped." {
		t.Errorf("flash %q", msg)
	}
	if got := asked(); !slices.Equal(got, []string{"Stop this workbench? Its owner is told."}) {
		t.Errorf("questions asked: %q", got)
	}
	if got, err := p.srv.Store.WorkbenchByID(ctx, wb.ID); err != nil || got.State != models.StateStopped {
		t.Errorf("after the stop: %+v %v", got, err)
	}
}
