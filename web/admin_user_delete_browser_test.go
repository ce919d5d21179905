package web_test

import (
	"context"
	"net/http"
	"strings"
	"testing"

	"github.com/chromedp/chromedp"

	"workbench/models"
)

// In Chromium, an admin clicks Delete on lin's row, reads what goes, types
// a wrong name (refused, lin kept), then lin's name, confirms the password
// and is back on the users page, where lin's row is now the tombstone
// deleted-<id>, marked deleted and without actions.
func TestBrowserAdminDeletesAUser(t *testing.T) {
	p := newPortal(t)
	ctx := btNewBrowser(t) // closed before the portal
	bg := context.Background()
	lin, err := p.srv.Store.CreateUser(bg, models.NewUser{Username: "lin", Password: "lin-password-1", Role: models.RoleUser})
	if err != nil {
		t.Fatal(err)
	}
	btLoginAsAdmin(t, ctx, p.ts.URL)
	btNavigate(t, ctx, p.ts.URL+"/admin/users")
	row := `[data-testid=user-row][data-username=lin]`
	resp := btSubmit(t, ctx, "click Delete on lin's row", chromedp.Click(chromedp.CSS(row+` [data-testid=delete-user]`)))
	if resp.Status != http.StatusOK || btLocation(t, ctx).Path != "/admin/users/"+itoa(lin.ID)+"/delete" {
		t.Fatalf("Delete opened %s (%d)", btLocation(t, ctx), resp.Status)
	}
	if got := btText(t, ctx, `[data-testid=user-delete-keeps]`); !strings.Contains(got, "deleted-"+itoa(lin.ID)) {
		t.Errorf("the page does not say what stays: %q", got)
	}
	btScreenshot(t, ctx, "admin-user-delete.png")

	btDo(t, ctx, "type a wrong name", chromedp.SendKeys(chromedp.CSS(`[data-testid=user-delete-confirm]`), "lni"))
	resp = btSubmit(t, ctx, "click Delete the account", chromedp.Click(chromedp.CSS(`[data-testid=user-delete-submit]`)))
	resp = btConfirmSudo(t, ctx, resp, btAdminPassword)
	if resp.Status != http.StatusBadRequest {
		t.Fatalf("a wrong name: status %d, want 400", resp.Status)
	}
	if got := btText(t, ctx, `.field-error`); !strings.Contains(got, "type lin exactly to confirm; nothing was deleted") {
		t.Fatalf("the page says %q", got)
	}
	if u, _ := p.srv.Store.UserByID(bg, lin.ID); u.Deleted() {
		t.Fatal("a wrong name deleted lin")
	}

	btDo(t, ctx, "type lin", chromedp.SendKeys(chromedp.CSS(`[data-testid=user-delete-confirm]`), "lin"))
	resp = btSubmit(t, ctx, "click Delete the account", chromedp.Click(chromedp.CSS(`[data-testid=user-delete-submit]`)))
	if resp.Status != http.StatusOK || btLocation(t, ctx).Path != "/admin/users" {
		t.Fatalf("after the delete: status %d at %s", resp.Status, btLocation(t, ctx))
	}
	if got := btText(t, ctx, `[data-testid=flash]`); !strings.Contains(got, "The account lin is deleted") {
		t.Errorf("flash %q", got)
	}
	tomb := `[data-testid=user-row][data-username="deleted-` + itoa(lin.ID) + `"]`
	if !btVisible(t, ctx, tomb+` [data-testid=user-deleted]`) || btVisible(t, ctx, tomb+` [data-testid=delete-user]`) || btVisible(t, ctx, row) {
		t.Error("the users page does not show lin's tombstone as deleted, without actions")
	}
	if u, _ := p.srv.Store.UserByID(bg, lin.ID); !u.Deleted() {
		t.Fatal("lin is not deleted")
	}
	p.srv.Manager.Wait()
}
