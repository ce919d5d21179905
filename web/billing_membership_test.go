package web_test

import (
	"context"
	"encoding/csv"
	"fmt"
	"net/http"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/PuerkitoBio/goquery"

	"workbench/models"
)

// gmRun gives user a one-GPU workbench (of a seeded, priced model) and a
// run of it from start, closed at end (open when end is zero).
func gmRun(t *testing.T, p *testPortal, user *models.User, name string, start, end time.Time) {
	t.Helper()
	ctx := context.Background()
	s := p.srv.Store
	imgs, _ := s.ListImages(ctx, false)
	fls, _ := s.ListFlavors(ctx, false)
	wb := &models.Workbench{Name: name, OwnerID: user.ID, ImageID: imgs[0].ID, FlavorID: fls[0].ID, Token: "t"}
	if err := s.CreateWorkbench(ctx, wb, models.GPUNeed{}, nil); err != nil {
		t.Fatal(err)
	}
	prices, _ := s.CurrentPrices(ctx, time.Now())
	model := ""
	for _, r := range prices {
		if r.Resource == "gpu" {
			model = r.GPUModel
		}
	}
	iv := &models.UsageInterval{WorkbenchID: wb.ID, UserID: user.ID, GPUModel: model, GPUCount: 1, UnitKind: models.UnitGPU,
		CPUMilli: 1000, MemoryMiB: 1024, StartedAt: start}
	if err := s.OpenInterval(ctx, iv); err != nil {
		t.Fatal(err)
	}
	if !end.IsZero() {
		if err := s.CloseInterval(ctx, wb.ID, end, "stopped"); err != nil {
			t.Fatal(err)
		}
	}
}

// gmByGroup reads the admin's billing CSV by group of month: gpu_seconds
// and amount_micros per key ("" is no group).
func gmByGroup(t *testing.T, p *testPortal, admin *http.Client, month string) (secs, micros map[string]int64) {
	t.Helper()
	res, body := p.get(admin, "/admin/billing.csv?group_by=group&month="+month)
	recs, err := csv.NewReader(strings.NewReader(strings.TrimPrefix(body, "\ufeff"))).ReadAll()
	if res.StatusCode != http.StatusOK || err != nil || len(recs) == 0 {
		t.Fatalf("billing csv: %d %v", res.StatusCode, err)
	}
	secs, micros = map[string]int64{}, map[string]int64{}
	for _, r := range recs[1:] {
		secs[r[1]], _ = strconv.ParseInt(r[2], 10, 64)
		micros[r[1]], _ = strconv.ParseInt(r[5], 10, 64)
	}
	return secs, micros
}

// gmPageKeys is the keys of the rows of the admin's billing page by group.
func gmPageKeys(t *testing.T, p *testPortal, admin *http.Client, month string) map[string]bool {
	t.Helper()
	_, body := p.get(admin, "/admin/billing?group_by=group&month="+month)
	keys := map[string]bool{}
	mpDoc(t, body).Find(`[data-testid=billing-row]`).Each(func(_ int, s *goquery.Selection) {
		k, _ := s.Attr("data-key")
		keys[k] = true
	})
	return keys
}

// A member moved from group alpha to group beta at 10:30 has their run of
// 09:00–12:00 billed (after the move) half to each: the hour of the move
// split at it, by seconds, the two parts adding up to the hour's line.
// It was all beta's, the group they were in when the bill was written.
// The lead's statement of alpha has them too, and its "accruing" line
// counts the running part from before the move.
func TestBillingFollowsAMemberMovedMidMonth(t *testing.T) {
	p := newPortal(t)
	ctx := context.Background()
	s := p.srv.Store
	tokenFor(t, p, "ada", "user")
	ada, _ := s.UserByUsername(ctx, "ada")
	admin, _ := mpAdmin(t, p)
	month := models.MonthStart(time.Now())
	m := month.Format("2006-01")
	stamp := month
	s.SetClock(func() time.Time { return stamp })
	t.Cleanup(func() { s.SetClock(time.Now) })
	alpha, _ := s.CreateGroup(ctx, "alpha", "")
	beta, _ := s.CreateGroup(ctx, "beta", "")
	if err := s.AddGroupMember(ctx, alpha.ID, ada.ID); err != nil {
		t.Fatal(err)
	}
	gmRun(t, p, ada, "exp", month.Add(9*time.Hour), month.Add(12*time.Hour))
	stamp = month.Add(10*time.Hour + 30*time.Minute)
	if err := s.RemoveGroupMember(ctx, alpha.ID, ada.ID); err != nil {
		t.Fatal(err)
	}
	if err := s.AddGroupMember(ctx, beta.ID, ada.ID); err != nil {
		t.Fatal(err)
	}
	if _, err := p.srv.Manager.Billing().BillOnce(ctx); err != nil {
		t.Fatal(err)
	}
	var total int64
	if items, sum, err := s.UsageSummary(ctx, month, month.AddDate(0, 1, 0), "user", ada.ID); err != nil || len(items) == 0 {
		t.Fatalf("ada's month: %v %v", items, err)
	} else {
		total = sum
	}
	secs, micros := gmByGroup(t, p, admin, m)
	if secs["alpha"] != 5400 || secs["beta"] != 5400 || len(secs) != 2 {
		t.Fatalf("GPU-seconds by group %v, want alpha 5400 and beta 5400", secs)
	}
	if micros["alpha"]+micros["beta"] != total || micros["alpha"] <= 0 || micros["alpha"]-micros["beta"] > 1 || micros["beta"]-micros["alpha"] > 1 {
		t.Errorf("amounts by group %v, want halves of %d", micros, total)
	}
	if keys := gmPageKeys(t, p, admin, m); !keys["alpha"] || !keys["beta"] || len(keys) != 2 {
		t.Errorf("billing page by group: %v", keys)
	}
	res, body := p.get(admin, fmt.Sprintf("/groups/%d/billing.csv?month=%s", alpha.ID, m))
	recs, err := csv.NewReader(strings.NewReader(strings.TrimPrefix(body, "\ufeff"))).ReadAll()
	if res.StatusCode != http.StatusOK || err != nil || len(recs) != 2 || recs[1][2] != "ada" || recs[1][6] != strconv.FormatInt(micros["alpha"], 10) {
		t.Errorf("alpha's statement csv: %d %q (%v)", res.StatusCode, recs, err)
	}

	// Running now, moved back a minute ago: alpha's statement counts what
	// ada ran before the move as accruing (it read nothing: she is not
	// its member now). Only where both minutes lie in this month.
	now := time.Now().UTC()
	if start := now.Add(-3 * time.Minute).Truncate(time.Second); !start.Before(models.MonthStart(now)) {
		gmRun(t, p, ada, "live", start, time.Time{})
		stamp = now.Add(-time.Minute)
		if err := s.RemoveGroupMember(ctx, beta.ID, ada.ID); err != nil {
			t.Fatal(err)
		}
		if err := s.AddGroupMember(ctx, alpha.ID, ada.ID); err != nil {
			t.Fatal(err)
		}
		_, body := p.get(admin, fmt.Sprintf("/groups/%d/billing?month=%s", beta.ID, m))
		if mpDoc(t, body).Find(`[data-testid=group-billing-pending]`).Length() != 1 {
			t.Errorf("beta's statement has no accruing line for ada's running minutes in it")
		}
	}
}

// A group deleted with an hour in progress: that hour, billed after the
// deletion, is the deleted group's up to the deletion, "ml101 (deleted
// group N)", and no group's after it, on the billing page by group and
// its CSV (it all read "no group"). Home storage since its last bill goes
// the same way.
func TestBillingKeepsADeletedGroupsHourInProgress(t *testing.T) {
	p := newPortal(t)
	ctx := context.Background()
	s := p.srv.Store
	tokenFor(t, p, "ada", "user")
	ada, _ := s.UserByUsername(ctx, "ada")
	admin, adminTok := mpAdmin(t, p)
	month := models.MonthStart(time.Now())
	m := month.Format("2006-01")
	stamp := month
	s.SetClock(func() time.Time { return stamp })
	t.Cleanup(func() { s.SetClock(time.Now) })
	g, _ := s.CreateGroup(ctx, "ml101", "")
	if err := s.AddGroupMember(ctx, g.ID, ada.ID); err != nil {
		t.Fatal(err)
	}
	gmRun(t, p, ada, "exp", month.Add(9*time.Hour), time.Time{})
	stamp = month.Add(10*time.Hour + 20*time.Minute)
	if code, out := p.api("DELETE", fmt.Sprintf("/api/v1/admin/groups/%d", g.ID), adminTok, ""); code != http.StatusNoContent {
		t.Fatalf("delete the group: %d %v", code, out)
	}
	wbs, err := s.ListWorkbenches(ctx, ada.ID)
	if err != nil || len(wbs) != 1 {
		t.Fatalf("workbenches %v %v", wbs, err)
	}
	if err := s.CloseInterval(ctx, wbs[0].ID, month.Add(10*time.Hour+50*time.Minute), "stopped"); err != nil {
		t.Fatal(err)
	}
	if _, err := p.srv.Manager.Billing().BillOnce(ctx); err != nil {
		t.Fatal(err)
	}
	deleted := models.DeletedGroupKey("ml101", g.ID)
	secs, micros := gmByGroup(t, p, admin, m)
	if secs[deleted] != 4800 || secs[""] != 1800 || len(secs) != 2 || micros[deleted] <= 0 || micros[""] <= 0 {
		t.Fatalf("by group: seconds %v, amounts %v; want %s 4800 s and no group 1800 s", secs, micros, deleted)
	}
	if keys := gmPageKeys(t, p, admin, m); !keys[deleted] || len(keys) != 2 {
		t.Errorf("billing page by group: %v", keys)
	}
}
