package web_test

import (
	"context"
	"encoding/csv"
	"fmt"
	"net/http"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/PuerkitoBio/goquery"

	"workbench/models"
)

// A group's lead reads what the lines billed to the group cost this month,
// per member, and downloads it as CSV; another member of the group, a
// member of another group and a stranger get the answer of a missing
// group; the admin sees it too. The lead finds the link on /usage.
func TestGroupLeadReadsTheGroupsStatement(t *testing.T) {
	p := newPortal(t)
	ctx := context.Background()
	st := p.srv.Store
	adminTok := tokenFor(t, p, "admin", "admin")
	lab, err := st.CreateGroup(ctx, "lab", "")
	if err != nil {
		t.Fatal(err)
	}
	vision, err := st.CreateGroup(ctx, "vision", "")
	if err != nil {
		t.Fatal(err)
	}
	users := map[string]*models.User{}
	for _, name := range []string{"lena", "max", "olga", "pete"} {
		tokenFor(t, p, name, "user")
		u, err := st.UserByUsername(ctx, name)
		if err != nil {
			t.Fatal(err)
		}
		users[name] = u
	}
	for _, m := range []struct {
		g *models.Group
		u string
	}{{lab, "lena"}, {lab, "max"}, {lab, "pete"}, {vision, "olga"}} {
		if err := st.AddGroupMember(ctx, m.g.ID, users[m.u].ID); err != nil {
			t.Fatal(err)
		}
	}
	// Only a member can lead; the API makes lena lead of lab.
	if code, out := p.api("PUT", fmt.Sprintf("/api/v1/admin/groups/%d/members/olga/lead", lab.ID), adminTok, ""); code != http.StatusBadRequest {
		t.Fatalf("olga (not in lab) made its lead: %d %v", code, out)
	}
	code, out := p.api("PUT", fmt.Sprintf("/api/v1/admin/groups/%d/members/lena/lead", lab.ID), adminTok, "")
	if leads, _ := out["leads"].([]any); code != 200 || len(leads) != 1 || leads[0] != "lena" {
		t.Fatalf("make lena lead: %d %v", code, out)
	}

	month := models.MonthStart(time.Now())
	at := month.Add(time.Hour)
	mpSeedLines(t, p, users["lena"].ID, "lab", at, 1_000_000)
	mpSeedLines(t, p, users["max"].ID, "lab", at.Add(24*time.Hour), 2_000_000, 3_000_000)
	mpSeedLines(t, p, users["olga"].ID, "vision", at, 7_000_000)
	mpSeedLines(t, p, users["max"].ID, "lab", month.AddDate(0, -1, 1), 9_000_000) // last month

	lena := p.client()
	p.login(lena, "lena", "lena-password")
	_, usage := p.get(lena, "/usage")
	link := parseHTML(t, usage).Find(tid("led-group-link"))
	href, _ := link.Attr("href")
	if link.Length() != 1 || link.Text() != "lab" || !strings.HasPrefix(href, fmt.Sprintf("/groups/%d/billing", lab.ID)) {
		t.Fatalf("lena's /usage does not link the group she leads: %d links, %q → %q", link.Length(), link.Text(), href)
	}
	res, page := p.get(lena, href)
	if res.StatusCode != 200 {
		t.Fatalf("lena opens %s: %d", href, res.StatusCode)
	}
	doc := parseHTML(t, page)
	rows := map[string]string{}
	doc.Find(tid("group-billing-row")).Each(func(_ int, s *goquery.Selection) {
		rows[s.AttrOr("data-key", "")] = strings.TrimSpace(s.Find(tid("group-billing-amount")).Text())
	})
	if len(rows) != 2 || !strings.HasPrefix(rows["max"], "5.00") || !strings.HasPrefix(rows["lena"], "1.00") {
		t.Errorf("lab's rows this month %v, want max 5.00 and lena 1.00 (olga's vision lines and last month's left out)", rows)
	}
	if total := doc.Find(tid("group-billing-total")).Text(); !strings.HasPrefix(total, "6.00") {
		t.Errorf("lab's total %q, want 6.00", total)
	}
	// By workbench, the owners are named (two members may name theirs alike).
	_, page = p.get(lena, fmt.Sprintf("/groups/%d/billing?group_by=workbench", lab.ID))
	if keys := parseHTML(t, page).Find(tid("group-billing-row")).Map(func(_ int, s *goquery.Selection) string { return s.AttrOr("data-key", "") }); len(keys) != 2 {
		t.Errorf("by workbench: %v, want one row per owner's workbench", keys)
	}
	// The CSV has the same figures, exact.
	res, body := p.get(lena, fmt.Sprintf("/groups/%d/billing.csv", lab.ID))
	recs, err := csv.NewReader(strings.NewReader(strings.TrimPrefix(body, "\ufeff"))).ReadAll()
	if res.StatusCode != 200 || err != nil || len(recs) != 3 || recs[0][2] != "user" {
		t.Fatalf("CSV: %d %v %v", res.StatusCode, err, recs)
	}
	for _, r := range recs[1:] {
		if want := map[string]string{"max": "5.000000", "lena": "1.000000"}[r[2]]; r[1] != "lab" || r[5] != want {
			t.Errorf("CSV row %v, want lab's %s at %s", r, r[2], want)
		}
	}
	// "By group" is the admin's view across groups.
	if res, _ := p.get(lena, fmt.Sprintf("/groups/%d/billing?group_by=group", lab.ID)); res.StatusCode != http.StatusBadRequest {
		t.Errorf("group_by=group: %d, want 400", res.StatusCode)
	}

	// Not a lead of it: the same answer as a missing group.
	for _, who := range []string{"max", "olga"} {
		c := p.client()
		p.login(c, who, who+"-password")
		for _, path := range []string{fmt.Sprintf("/groups/%d/billing", lab.ID), fmt.Sprintf("/groups/%d/billing.csv", lab.ID), "/groups/99999/billing"} {
			if res, _ := p.get(c, path); res.StatusCode != http.StatusNotFound {
				t.Errorf("%s reads %s: %d, want 404", who, path, res.StatusCode)
			}
		}
		if _, usage := p.get(c, "/usage"); strings.Contains(usage, `data-testid="led-groups"`) {
			t.Errorf("%s, who leads no group, is offered a group's statement", who)
		}
	}
	// lena leads lab, not vision.
	if res, _ := p.get(lena, fmt.Sprintf("/groups/%d/billing", vision.ID)); res.StatusCode != http.StatusNotFound {
		t.Errorf("lena reads vision's statement: %d", res.StatusCode)
	}
	admin := p.client()
	p.login(admin, "admin", adminPassword)
	if res, _ := p.get(admin, fmt.Sprintf("/groups/%d/billing", vision.ID)); res.StatusCode != 200 {
		t.Errorf("the admin reads vision's statement: %d", res.StatusCode)
	}

	// Renamed, the group keeps its month: the lines billed under the old
	// name are still on its statement, and one row in the admin's by-group view.
	if code, out := p.api("PUT", fmt.Sprintf("/api/v1/admin/groups/%d", lab.ID), adminTok, `{"name":"lab-2027"}`); code != 200 {
		t.Fatalf("rename lab: %d %v", code, out)
	}
	mpSeedLines(t, p, users["pete"].ID, "lab-2027", at.Add(48*time.Hour), 500_000)
	_, page = p.get(lena, fmt.Sprintf("/groups/%d/billing", lab.ID))
	if total := parseHTML(t, page).Find(tid("group-billing-total")).Text(); !strings.HasPrefix(total, "6.50") {
		t.Errorf("after the rename lab's total is %q, want 6.50 (the lines under both names)", total)
	}
	_, page = p.get(admin, "/admin/billing?group_by=group")
	keys := parseHTML(t, page).Find(tid("billing-row")).Map(func(_ int, s *goquery.Selection) string { return s.AttrOr("data-key", "") })
	if !slices.Equal(keys, []string{"vision", "lab-2027"}) {
		t.Errorf("the admin's month by group after the rename: %v, want vision and lab-2027 (no row for the old name)", keys)
	}

	// No longer lead (or no longer in the group): no longer reads it.
	if code, out := p.api("DELETE", fmt.Sprintf("/api/v1/admin/groups/%d/members/lena/lead", lab.ID), adminTok, ""); code != 200 {
		t.Fatalf("lena no longer lead: %d %v", code, out)
	}
	if res, _ := p.get(lena, fmt.Sprintf("/groups/%d/billing", lab.ID)); res.StatusCode != http.StatusNotFound {
		t.Errorf("lena, no longer lead, reads lab's statement: %d", res.StatusCode)
	}
	if rows, _, err := st.AuditPage(ctx, "group.lead", "admin", 0, 10); err != nil || len(rows) != 2 {
		t.Errorf("group.lead audit rows %d (%v), want 2", len(rows), err)
	}
}
