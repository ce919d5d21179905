package web_test

import (
	"context"
	"testing"

	"github.com/chromedp/chromedp"
)

// A group's card holds its "Add member" form inside its edges and keeps
// Rename and Delete group apart, in English and in Chinese: the button ran
// past the card, the links read "RenameDelete group", and in Chinese the
// button wrapped one character a line.
func TestBrowserGroupCardLayout(t *testing.T) {
	p, ctx := btAdminIn(t, true)
	ctx0 := context.Background()
	g, err := p.srv.Store.CreateGroup(ctx0, "ml-team", "")
	if err != nil {
		t.Fatal(err)
	}
	for _, name := range []string{"alice", "bob"} {
		tokenFor(t, p, name, "user")
		u, err := p.srv.Store.UserByUsername(ctx0, name)
		if err != nil {
			t.Fatal(err)
		}
		if err := p.srv.Store.AddGroupMember(ctx0, g.ID, u.ID); err != nil {
			t.Fatal(err)
		}
	}
	check := func(lang string) {
		t.Helper()
		btNavigate(t, ctx, p.ts.URL+"/admin/groups")
		got, err := chromedp.Run(ctx, chromedp.Evaluate[map[string]float64](`(() => {
			const card = document.querySelector("[data-testid=group-card]").getBoundingClientRect();
			const button = document.querySelector("[data-testid=group-add-member] button").getBoundingClientRect();
			const rename = document.querySelector("[data-testid=group-rename] summary").getBoundingClientRect();
			const del = document.querySelector("[data-testid=group-delete] summary").getBoundingClientRect();
			return {cardRight: card.right, buttonRight: button.right, buttonHeight: button.height,
				gap: del.top >= rename.bottom ? 99 : del.left - rename.right};
		})()`))
		if err != nil {
			t.Fatal(err)
		}
		btScreenshot(t, ctx, "admin-groups-"+lang+".png")
		if got["buttonRight"] > got["cardRight"] {
			t.Errorf("%s: Add member ends at %.0f px, past the card's edge at %.0f px", lang, got["buttonRight"], got["cardRight"])
		}
		if got["buttonHeight"] > 48 {
			t.Errorf("%s: Add member is %.0f px tall: its label wraps", lang, got["buttonHeight"])
		}
		if got["gap"] < 8 {
			t.Errorf("%s: Rename and Delete group are %.0f px apart: they read as one", lang, got["gap"])
		}
	}
	check("en")
	btSubmit(t, ctx, "click 中文", chromedp.Click(chromedp.CSS(`[data-testid=lang-zh-CN]`)))
	check("zh-CN")
}
