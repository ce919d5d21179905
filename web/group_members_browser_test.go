package web_test

import (
	"context"
	"net/http"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/chromedp/chromedp"

	"workbench/models"
)

// An admin types a member's name into a group's "Add member" box (the
// names are offered as they type) and clicks Add member. A name nobody has
// is said on that group's card with what was typed kept, not as a missing
// page; a real one joins the group with a line saying so, and Remove takes
// them out again. With JavaScript on and off: the forms are plain forms.
func TestBrowserAdminAddsAGroupMemberByName(t *testing.T) {
	for _, js := range []bool{true, false} {
		t.Run(map[bool]string{true: "js-on", false: "js-off"}[js], func(t *testing.T) { addGroupMemberByName(t, js) })
	}
}

func addGroupMemberByName(t *testing.T, js bool) {
	p := newPortal(t)
	ctx := btNewBrowser(t) // closed before the portal
	if !js {
		btDo(t, ctx, "disable JavaScript", btScriptsOff())
	}
	bg := context.Background()
	if _, err := p.srv.Store.CreateUser(bg, models.NewUser{Username: "lin", Password: "lin-password-1", Role: models.RoleUser}); err != nil {
		t.Fatal(err)
	}
	if _, err := p.srv.Store.CreateGroup(bg, "lab", "the lab"); err != nil {
		t.Fatal(err)
	}
	btLoginAsAdmin(t, ctx, p.ts.URL)
	btNavigate(t, ctx, p.ts.URL+"/admin/groups")
	card := `[data-testid=group-card]`
	offered, err := chromedp.Run(ctx, chromedp.Evaluate[[]string](`Array.from(document.querySelectorAll("#group-usernames option")).map(o => o.value)`))
	if err != nil || !slices.Equal(offered, []string{"admin", "lin"}) {
		t.Fatalf("names offered while typing: %q (%v)", offered, err)
	}
	btDo(t, ctx, "type a name nobody has",
		chromedp.SendKeys(chromedp.CSS(card+` [data-testid=group-member-username]`), "lni"))
	resp := btSubmit(t, ctx, "click Add member", chromedp.Click(chromedp.CSS(card+` [data-testid=group-add-member] button`)))
	resp = btConfirmSudo(t, ctx, resp, btAdminPassword)
	if resp.Status != http.StatusBadRequest {
		t.Fatalf("unknown member: status %d, want 400", resp.Status)
	}
	if got := btText(t, ctx, card+` [data-testid=group-member-error]`); got != `There is no user "lni": pick a username from the list.` {
		t.Fatalf("the card says %q", got)
	}
	if v := btValue(t, ctx, card+` [data-testid=group-member-username]`); v != "lni" {
		t.Fatalf("the box kept %q", v)
	}

	btDo(t, ctx, "correct the name to lin",
		chromedp.SetValue(chromedp.CSS(card+` [data-testid=group-member-username]`), "lin"))
	resp = btSubmit(t, ctx, "click Add member", chromedp.Click(chromedp.CSS(card+` [data-testid=group-add-member] button`)))
	if resp.Status != http.StatusOK || btLocation(t, ctx).Path != "/admin/groups" {
		t.Fatalf("adding lin: status %d at %s", resp.Status, btLocation(t, ctx))
	}
	if got := btText(t, ctx, `[data-testid=flash]`); got != "lin added to lab." {
		t.Fatalf("flash %q", got)
	}
	if got := btTexts(t, ctx, card+` ul.members li`); len(got) != 1 || !strings.HasPrefix(got[0], "lin") {
		t.Fatalf("members %q, want lin", got)
	}
	if g, err := p.srv.Store.GroupByName(bg, "lab"); err != nil || !slices.Equal(g.Members, []string{"lin"}) {
		t.Fatalf("members after the add: %v (%v)", g.Members, err)
	}
	// lin becomes a lead of lab (reads its statement), then no longer.
	resp = btSubmit(t, ctx, "click make lead beside lin", chromedp.Click(chromedp.CSS(card+` [data-testid=group-lead-on]`)))
	if got := btText(t, ctx, `[data-testid=flash]`); resp.Status != http.StatusOK || got != "lin now leads lab and reads its statement." {
		t.Fatalf("make lead: status %d, flash %q", resp.Status, got)
	}
	if !btVisible(t, ctx, card+` [data-testid=group-lead-badge]`) {
		t.Error("lin is not marked lead on the card")
	}
	if g, err := p.srv.Store.GroupByName(bg, "lab"); err != nil || !slices.Equal(g.Leads, []string{"lin"}) {
		t.Fatalf("leads after make lead: %v (%v)", g.Leads, err)
	}
	resp = btSubmit(t, ctx, "click remove as lead beside lin", chromedp.Click(chromedp.CSS(card+` [data-testid=group-lead-off]`)))
	if got := btText(t, ctx, `[data-testid=flash]`); resp.Status != http.StatusOK || got != "lin no longer leads lab." {
		t.Fatalf("remove as lead: status %d, flash %q", resp.Status, got)
	}
	if g, err := p.srv.Store.GroupByName(bg, "lab"); err != nil || len(g.Leads) != 0 {
		t.Fatalf("leads after remove as lead: %v (%v)", g.Leads, err)
	}
	resp = btSubmit(t, ctx, "click remove beside lin", chromedp.Click(chromedp.CSS(card+` [data-testid=group-member-remove]`)))
	if resp.Status != http.StatusOK {
		t.Fatalf("removing lin: status %d", resp.Status)
	}
	if got := btText(t, ctx, `[data-testid=flash]`); got != "lin removed from lab." {
		t.Fatalf("flash %q", got)
	}
	g, err := p.srv.Store.GroupByName(bg, "lab")
	if err != nil || len(g.Members) != 0 {
		t.Fatalf("members after the removal: %v (%v)", g.Members, err)
	}
}

// A group's lead opens Usage, clicks the group she leads and reads what
// each member's lines cost this month; the admin made her lead by a click
// (above), here through the store.
func TestBrowserGroupLeadOpensTheGroupsStatement(t *testing.T) {
	p := newPortal(t)
	bg := context.Background()
	st := p.srv.Store
	lab, err := st.CreateGroup(bg, "lab", "")
	if err != nil {
		t.Fatal(err)
	}
	ids := map[string]int64{}
	for _, name := range []string{"lena", "max"} {
		u, err := st.CreateUser(bg, models.NewUser{Username: name, Password: name + "-password-1", Role: models.RoleUser})
		if err != nil {
			t.Fatal(err)
		}
		ids[name] = u.ID
		if err := st.AddGroupMember(bg, lab.ID, u.ID); err != nil {
			t.Fatal(err)
		}
	}
	if err := st.SetGroupLead(bg, lab.ID, ids["lena"], true); err != nil {
		t.Fatal(err)
	}
	at := models.MonthStart(time.Now()).Add(time.Hour)
	mpSeedLines(t, p, ids["max"], "lab", at, 2_500_000)
	mpSeedLines(t, p, ids["lena"], "lab", at, 500_000)

	ctx := btNewBrowser(t)
	btNavigate(t, ctx, p.ts.URL+"/login")
	if resp := btLogin(t, ctx, "lena", "lena-password-1"); resp.Status != http.StatusOK {
		t.Fatalf("lena's login: %d", resp.Status)
	}
	btNavigate(t, ctx, p.ts.URL+"/usage")
	if resp := btSubmit(t, ctx, "click the group lena leads", chromedp.Click(chromedp.CSS(`[data-testid=led-group-link]`))); resp.Status != http.StatusOK {
		t.Fatalf("the group's statement: %d at %s", resp.Status, btLocation(t, ctx))
	}
	if got := btText(t, ctx, `[data-testid=group-billing-title]`); !strings.HasPrefix(got, "Group lab") {
		t.Errorf("title %q", got)
	}
	rows := btTexts(t, ctx, `[data-testid=group-billing-row]`)
	if len(rows) != 2 || !strings.HasPrefix(rows[0], "max") || !strings.Contains(rows[0], "2.50") || !strings.HasPrefix(rows[1], "lena") {
		t.Errorf("rows %q, want max's 2.50 first, then lena's", rows)
	}
	if got := btText(t, ctx, `[data-testid=group-billing-total]`); !strings.HasPrefix(got, "3.00") {
		t.Errorf("total %q, want 3.00", got)
	}
	btScreenshot(t, ctx, "group-billing.png")
}
