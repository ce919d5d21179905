package web_test

import (
	"context"
	"net/http"
	"strings"
	"testing"

	"github.com/chromedp/chromedp"
)

// In Chromium, with JavaScript on and off, an admin fills the add-user
// form and ticks two groups; one of them is deleted before the click, so
// Add user is refused with the reason beside the groups, the name and the
// ticks kept and the deleted group marked. The admin unticks it, types the
// password again, clicks Add user, and the new user is listed with its
// group.
func TestBrowserAdminAddsAUserToAGroup(t *testing.T) {
	for _, js := range []bool{true, false} {
		t.Run(jsName(js), func(t *testing.T) {
			p, b := btAdminIn(t, js)
			bg := context.Background()
			st := p.srv.Store
			if _, err := st.CreateGroup(bg, "ml101", ""); err != nil {
				t.Fatal(err)
			}
			lab, err := st.CreateGroup(bg, "gpu-lab", "")
			if err != nil {
				t.Fatal(err)
			}
			btNavigate(t, b, p.ts.URL+"/admin/users")
			form := `[data-testid=new-user-form] `
			box := func(g string) string { return form + `input[name=groups][data-group="` + g + `"]` }
			btDo(t, b, "fill the add-user form and tick ml101 and gpu-lab",
				chromedp.WaitVisible(chromedp.CSS(form+`input[name=username]`)),
				chromedp.SendKeys(chromedp.CSS(form+`input[name=username]`), "stud01"),
				chromedp.SendKeys(chromedp.CSS(form+`input[name=password]`), "stud01-password"),
				chromedp.Click(chromedp.CSS(box("ml101"))),
				chromedp.Click(chromedp.CSS(box("gpu-lab"))),
			)
			if _, err := st.DeleteGroup(bg, lab.ID); err != nil { // by another admin, meanwhile
				t.Fatal(err)
			}
			resp := btSubmit(t, b, "click Add user", chromedp.Click(chromedp.CSS(`[data-testid=new-user-submit]`)))
			resp = btConfirmSudo(t, b, resp, btAdminPassword)
			if resp.Status != http.StatusBadRequest {
				t.Fatalf("a deleted group: status %d, want 400", resp.Status)
			}
			if got := btText(t, b, `[data-testid=error-groups]`); !strings.Contains(got, `there is no group "gpu-lab"`) {
				t.Errorf("the form says %q about the deleted group", got)
			}
			btScreenshot(t, b, "admin-user-add-group-gone.png")
			if !btVisible(t, b, form+`input[name=username][value=stud01]`) || !btVisible(t, b, box("ml101")+`[checked]`) ||
				!btVisible(t, b, box("gpu-lab")+`[checked]`) || !btVisible(t, b, `[data-testid=new-user-group-gone]`) {
				t.Error("the refused form lost what was typed and ticked, or does not mark gpu-lab as gone")
			}
			if btVisible(t, b, `[data-testid=user-row][data-username=stud01]`) {
				t.Fatal("the refused form created stud01")
			}

			btDo(t, b, "untick gpu-lab and type the password again",
				chromedp.Click(chromedp.CSS(box("gpu-lab"))),
				chromedp.SendKeys(chromedp.CSS(form+`input[name=password]`), "stud01-password"),
			)
			resp = btSubmit(t, b, "click Add user", chromedp.Click(chromedp.CSS(`[data-testid=new-user-submit]`)))
			if resp.Status != http.StatusOK || btLocation(t, b).Path != "/admin/users" {
				t.Fatalf("after Add user: status %d at %s", resp.Status, btLocation(t, b))
			}
			if got := btText(t, b, `[data-testid=flash]`); !strings.Contains(got, "User stud01 added to the group ml101.") {
				t.Errorf("flash %q", got)
			}
			if got := btTexts(t, b, `[data-testid=user-row][data-username=stud01] .tag`); len(got) != 1 || got[0] != "ml101" {
				t.Errorf("stud01's row lists the groups %q, want [ml101]", got)
			}
		})
	}
}
