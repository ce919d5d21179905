package web_test

import (
	"context"
	"net/http"
	"slices"
	"testing"

	"github.com/chromedp/chromedp"

	"workbench/models"
)

// In Chromium, with JavaScript on and off: the instructor filters
// /admin/workbenches by the class, clicks "Stop all shown", answers the
// question (the script's dialog, or the portal's page without script) and
// confirms the password, and is back on the class's list with "Stopping 3
// workbenches of ml101". Every running workbench of the class stops, each
// audited as a single admin stop; another user's keeps running.
func TestBrowserAdminStopsAGroupsWorkbenches(t *testing.T) {
	for _, js := range []bool{true, false} {
		t.Run(map[bool]string{true: "js", false: "nojs"}[js], func(t *testing.T) {
			p, b := btAdminIn(t, js)
			ctx := context.Background()
			st := p.srv.Store
			g, err := st.CreateGroup(ctx, "ml101", "")
			if err != nil {
				t.Fatal(err)
			}
			var class []*models.Workbench
			for _, u := range []string{"stu1", "stu2"} {
				tokenFor(t, p, u, "user")
				user, _ := st.UserByUsername(ctx, u)
				if err := st.AddGroupMember(ctx, g.ID, user.ID); err != nil {
					t.Fatal(err)
				}
				class = append(class, p.runningRecord(user, "lab1", models.GPUNeed{}))
			}
			stu1, _ := st.UserByUsername(ctx, "stu1")
			class = append(class, p.runningRecord(stu1, "lab2", models.GPUNeed{}))
			tokenFor(t, p, "ben", "user")
			ben, _ := st.UserByUsername(ctx, "ben")
			other := p.runningRecord(ben, "thesis", models.GPUNeed{})
			asked := btAcceptDialogs(t, b)

			btNavigate(t, b, p.ts.URL+"/admin/workbenches?group=ml101")
			if n := len(btTexts(t, b, `[data-testid=stop-all-button]`)); n != 1 {
				t.Fatalf("the class's list has %d Stop all shown buttons, want 1", n)
			}
			resp := btSubmit(t, b, "click Stop all shown", chromedp.Click(chromedp.CSS(`[data-testid=stop-all-button]`)))
			resp = btConfirmSudo(t, b, resp, btAdminPassword)
			if !js {
				if resp.Status != http.StatusOK || btText(t, b, `[data-testid=confirm-question]`) != "Stop the 3 running workbenches of ml101? Their owners are told." {
					t.Fatalf("no question without JavaScript: %d at %s", resp.Status, resp.URL)
				}
				btSubmit(t, b, "answer yes", chromedp.Click(chromedp.CSS(`[data-testid=confirm-yes]`)))
			}
			if loc := btLocation(t, b); loc.Path != "/admin/workbenches" || loc.Query().Get("group") != "ml101" {
				t.Errorf("after the stops the browser is at %s, want the class's list", loc)
			}
			if msg := btText(t, b, `[data-testid=flash]`); msg != "Stopping 3 workbenches of ml101." {
				t.Errorf("flash %q", msg)
			}
			want := []string(nil)
			if js {
				want = []string{"Stop every running workbench of ml101? Their owners are told."}
			}
			if got := asked(); !slices.Equal(got, want) {
				t.Errorf("questions asked by the script: %q, want %q", got, want)
			}

			p.srv.Manager.Wait() // the stops run in the manager, past the request
			for _, wb := range class {
				if got, err := st.WorkbenchByID(ctx, wb.ID); err != nil || got.State != models.StateStopped {
					t.Errorf("%s after Stop all: %+v %v", wb.Name, got.State, err)
				}
			}
			if got, _ := st.WorkbenchByID(ctx, other.ID); got.State != models.StateRunning {
				t.Errorf("ben's workbench (not in ml101) is %s", got.State)
			}
			entries, err := st.ListAudit(ctx, 100)
			if err != nil {
				t.Fatal(err)
			}
			stopped := map[string]bool{}
			for _, e := range entries {
				if e.Action == "workbench.admin_stop" && e.Actor == "admin" {
					stopped[e.Target] = true
				}
			}
			if len(stopped) != 3 || !stopped[class[0].ID] || !stopped[class[1].ID] || !stopped[class[2].ID] {
				t.Errorf("admin_stop audit rows for %v, want the class's 3", stopped)
			}
		})
	}
}
