package web_test

import (
	"context"
	"net/http"
	"strings"
	"testing"

	"github.com/chromedp/chromedp"

	"workbench/models"
)

// In Chromium, with JavaScript on and off, an admin clicks Rename on lin's
// row, reads what changes, types a name already taken (refused on the
// form, lin kept), then a free one, confirms the password and is back on
// the users page, where the row carries the new name.
func TestBrowserAdminRenamesAUser(t *testing.T) {
	for _, js := range []bool{true, false} {
		t.Run(jsName(js), func(t *testing.T) {
			p, b := btAdminIn(t, js)
			bg := context.Background()
			lin, err := p.srv.Store.CreateUser(bg, models.NewUser{Username: "lin", Password: "lin-password-1", Role: models.RoleUser})
			if err != nil {
				t.Fatal(err)
			}
			if _, err := p.srv.Store.CreateUser(bg, models.NewUser{Username: "mei", Password: "mei-password-1", Role: models.RoleUser}); err != nil {
				t.Fatal(err)
			}
			btNavigate(t, b, p.ts.URL+"/admin/users")
			resp := btSubmit(t, b, "click Rename on lin's row", chromedp.Click(chromedp.CSS(`[data-testid=user-row][data-username=lin] [data-testid=rename-user]`)))
			if resp.Status != http.StatusOK || btLocation(t, b).Path != "/admin/users/"+itoa(lin.ID)+"/rename" {
				t.Fatalf("Rename opened %s (%d)", btLocation(t, b), resp.Status)
			}
			if got := btText(t, b, `[data-testid=user-rename-changes]`); got == "" {
				t.Error("the form does not say what a rename changes")
			}
			name := `[data-testid=user-rename-name]`
			btDo(t, b, "type a taken name", chromedp.SetValue(chromedp.CSS(name), "mei"))
			resp = btSubmit(t, b, "click Rename", chromedp.Click(chromedp.CSS(`[data-testid=user-rename-submit]`)))
			resp = btConfirmSudo(t, b, resp, btAdminPassword)
			if resp.Status != http.StatusConflict {
				t.Fatalf("a taken name: status %d, want 409", resp.Status)
			}
			if got := btText(t, b, `.field-error`); !strings.Contains(got, "taken") {
				t.Errorf("the form says %q about a taken name", got)
			}
			if u, _ := p.srv.Store.UserByID(bg, lin.ID); u.Username != "lin" {
				t.Fatalf("a taken name renamed lin to %q", u.Username)
			}
			btDo(t, b, "type a free name", chromedp.SetValue(chromedp.CSS(name), "lin.wu"))
			resp = btSubmit(t, b, "click Rename", chromedp.Click(chromedp.CSS(`[data-testid=user-rename-submit]`)))
			if resp.Status != http.StatusOK || btLocation(t, b).Path != "/admin/users" {
				t.Fatalf("after the rename: status %d at %s", resp.Status, btLocation(t, b))
			}
			if got := btText(t, b, `[data-testid=flash]`); !strings.Contains(got, "lin is now lin.wu") {
				t.Errorf("flash %q", got)
			}
			if !btVisible(t, b, `[data-testid=user-row][data-username="lin.wu"]`) || btVisible(t, b, `[data-testid=user-row][data-username=lin]`) {
				t.Error("the users page does not list lin under the new name")
			}
		})
	}
}
