package web_test

import (
	"context"
	"encoding/csv"
	"fmt"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/PuerkitoBio/goquery"

	"workbench/models"
)

// A deleted group's lines still name it on the admin's billing by group,
// marked deleted, "ml101 (deleted group 7)" (they read "no group", or were
// summed with a new group that took the name), in the CSV too; its row
// links to its statement by member, which an admin still reads, with its
// CSV. A lead of another group cannot read it.
func TestBillingNamesADeletedGroup(t *testing.T) {
	p := newPortal(t)
	ctx := context.Background()
	tokenFor(t, p, "ada", "user")
	tokenFor(t, p, "bob", "user")
	ada, _ := p.srv.Store.UserByUsername(ctx, "ada")
	bob, _ := p.srv.Store.UserByUsername(ctx, "bob")
	admin, adminTok := mpAdmin(t, p)
	old, err := p.srv.Store.CreateGroup(ctx, "ml101", "")
	if err != nil {
		t.Fatal(err)
	}
	if err := p.srv.Store.AddGroupMember(ctx, old.ID, ada.ID); err != nil {
		t.Fatal(err)
	}
	month := models.MonthStart(time.Now())
	mpSeedLines(t, p, ada.ID, "ml101", month, 1_000_000, 2_000_000)
	if code, out := p.api("DELETE", fmt.Sprintf("/api/v1/admin/groups/%d", old.ID), adminTok, ""); code != http.StatusNoContent {
		t.Fatalf("delete the group: %d %v", code, out)
	}
	// Next term's ml101.
	again, err := p.srv.Store.CreateGroup(ctx, "ml101", "")
	if err != nil {
		t.Fatal(err)
	}
	if err := p.srv.Store.AddGroupMember(ctx, again.ID, bob.ID); err != nil {
		t.Fatal(err)
	}
	mpSeedLines(t, p, bob.ID, "ml101", month.Add(5*time.Hour), 4_000_000)

	deleted := fmt.Sprintf("ml101 (deleted group %d)", old.ID)
	m := month.Format("2006-01")
	_, body := p.get(admin, "/admin/billing?group_by=group&month="+m)
	doc := mpDoc(t, body)
	rows := map[string]string{}
	links := map[string]string{}
	doc.Find(`[data-testid=billing-row]`).Each(func(_ int, s *goquery.Selection) {
		k, _ := s.Attr("data-key")
		rows[k] = strings.TrimSpace(s.Find(`[data-testid=billing-amount]`).Text())
		links[k], _ = s.Find(`[data-testid=billing-group-statement]`).Attr("href")
		if k == deleted && strings.TrimSpace(s.Find("td").First().Text()) != deleted {
			t.Errorf("the deleted group's row reads %q", s.Find("td").First().Text())
		}
	})
	if len(rows) != 2 || rows[deleted] != "3.00 USD" || rows["ml101"] != "4.00 USD" || strings.Contains(doc.Find(`[data-testid=billing-table]`).Text(), "no group") {
		t.Fatalf("by group: %v", rows)
	}
	if want := fmt.Sprintf("/groups/%d/billing?month=%s", old.ID, m); links[deleted] != want {
		t.Errorf("the deleted group's row links to %q, want %q", links[deleted], want)
	}

	res, body := p.get(admin, "/admin/billing.csv?group_by=group&month="+m)
	recs, err := csv.NewReader(strings.NewReader(strings.TrimPrefix(body, "\ufeff"))).ReadAll()
	if res.StatusCode != http.StatusOK || err != nil {
		t.Fatalf("billing csv: %d %v", res.StatusCode, err)
	}
	amounts := map[string]string{}
	for _, r := range recs[1:] {
		amounts[r[1]] = r[5]
	}
	if len(amounts) != 2 || amounts[deleted] != "3000000" || amounts["ml101"] != "4000000" {
		t.Errorf("billing csv by group: %q", recs)
	}

	res, body = p.get(admin, links[deleted])
	doc = mpDoc(t, body)
	if title := doc.Find(`[data-testid=group-billing-title]`).Text(); res.StatusCode != http.StatusOK || !strings.Contains(title, deleted) {
		t.Fatalf("the deleted group's statement: %d %q", res.StatusCode, title)
	}
	if k, _ := doc.Find(`[data-testid=group-billing-row]`).Attr("data-key"); doc.Find(`[data-testid=group-billing-row]`).Length() != 1 || k != "ada" {
		t.Errorf("the deleted group's statement by member: %d rows, first %q", doc.Find(`[data-testid=group-billing-row]`).Length(), k)
	}
	res, body = p.get(admin, fmt.Sprintf("/groups/%d/billing.csv?month=%s", old.ID, m))
	recs, err = csv.NewReader(strings.NewReader(strings.TrimPrefix(body, "\ufeff"))).ReadAll()
	if res.StatusCode != http.StatusOK || err != nil || len(recs) != 2 || recs[1][1] != deleted || recs[1][2] != "ada" || recs[1][6] != "3000000" {
		t.Errorf("the deleted group's statement csv: %d %q (%v)", res.StatusCode, recs, err)
	}

	// Not for anyone else: bob leads the new ml101, not the deleted one.
	if err := p.srv.Store.SetGroupLead(ctx, again.ID, bob.ID, true); err != nil {
		t.Fatal(err)
	}
	lead := p.client()
	p.login(lead, "bob", "bob-password")
	if res, _ := p.get(lead, fmt.Sprintf("/groups/%d/billing", old.ID)); res.StatusCode != http.StatusNotFound {
		t.Errorf("a lead of another group reads the deleted group's statement: %d", res.StatusCode)
	}
}
