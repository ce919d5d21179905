package web_test

import (
	"context"
	"database/sql"
	"fmt"
	"net/http"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"workbench/models"
	"workbench/web"
)

// A lead finds who in the group holds GPUs and how long they have sat
// idle, and what the running workbenches are running up, on the group's
// statement (it said "nothing charged" while they ran, and idle holders
// were only on the admins' pages). Another group's workbench is not there.
func TestGroupLeadSeesMembersRunningWorkbenches(t *testing.T) {
	var dataDir string
	p, _ := enginePortal(t, func(c *web.Config) { dataDir = c.DataDir })
	ctx := context.Background()
	st := p.srv.Store
	adminTok := tokenFor(t, p, "admin", "admin")
	lab, err := st.CreateGroup(ctx, "lab", "")
	if err != nil {
		t.Fatal(err)
	}
	other, err := st.CreateGroup(ctx, "other", "")
	if err != nil {
		t.Fatal(err)
	}
	toks := map[string]string{}
	for _, m := range []struct {
		g    *models.Group
		name string
	}{{lab, "lena"}, {lab, "max"}, {other, "olga"}} {
		toks[m.name] = tokenFor(t, p, m.name, "user")
		u, _ := st.UserByUsername(ctx, m.name)
		if err := st.AddGroupMember(ctx, m.g.ID, u.ID); err != nil {
			t.Fatal(err)
		}
	}
	if code, out := p.api("PUT", fmt.Sprintf("/api/v1/admin/groups/%d/members/lena/lead", lab.ID), adminTok, ""); code != http.StatusOK {
		t.Fatalf("make lena lead: %d %v", code, out)
	}
	lena := p.client()
	p.login(lena, "lena", "lena-password")
	path := fmt.Sprintf("/groups/%d/billing", lab.ID)
	if _, page := p.get(lena, path); parseHTML(t, page).Find(tid("group-running-empty")).Length() != 1 {
		t.Fatal("with nothing running, the list does not say so")
	}

	maxID := moneyLaunch(t, p, toks["max"], "train")
	olgaID := moneyLaunch(t, p, toks["olga"], "elsewhere")
	waitState(t, p, toks["max"], maxID, "running")
	waitState(t, p, toks["olga"], olgaID, "running")
	// max's run began two hours ago and his notebook was last used 45
	// minutes ago (the start moved back in the file: the page reads the
	// wall clock).
	db, err := sql.Open("sqlite3", "file:"+filepath.Join(dataDir, models.DBFileName)+"?_busy_timeout=10000")
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	now := time.Now().UTC()
	if _, err := db.Exec(`UPDATE workbenches SET started_at = ?, last_activity_at = ? WHERE id = ?`, now.Add(-2*time.Hour), now.Add(-45*time.Minute), maxID); err != nil {
		t.Fatal(err)
	}

	_, page := p.get(lena, path)
	doc := parseHTML(t, page)
	rows := doc.Find(tid("group-running-row"))
	if rows.Length() != 1 || rows.AttrOr("data-owner", "") != "max" || rows.AttrOr("data-name", "") != "train" {
		t.Fatalf("running list: %d rows (%q), want max's train only", rows.Length(), rows.Text())
	}
	if idle := strings.TrimSpace(rows.Find(tid("group-running-idle")).Text()); !strings.HasPrefix(idle, "45 min") || !strings.Contains(idle, "idle") {
		t.Errorf("max's idle time reads %q, want 45 min marked idle", idle)
	}
	if pending := doc.Find(tid("group-billing-pending")).Text(); !strings.Contains(pending, "accruing") {
		t.Errorf("the running cost is not on the statement: %q", pending)
	}
	// Last month's statement lists no running workbenches.
	prev := models.MonthStart(time.Now()).AddDate(0, -1, 0).Format("2006-01")
	if _, page := p.get(lena, path+"?month="+prev); parseHTML(t, page).Find(tid("group-running-table")).Length() != 0 {
		t.Error("last month's statement lists what runs now")
	}
}
