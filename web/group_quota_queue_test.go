package web_test

import (
	"context"
	"net/http"
	"net/url"
	"strconv"
	"testing"
	"time"

	"workbench/models"
	"workbench/web"
)

// Adding a user to a group whose quota is lower than their waiting
// launch's ask refuses that launch at once, with the reason: a membership
// change changes the effective quota like a quota saved on the quota page.
// The queue's own periodic look is an hour away here, so only the change
// can have done it.
func TestGroupMembershipActsOnTheQueueAtOnce(t *testing.T) {
	p := newPortal(t, func(c *web.Config) {
		c.Workbenches.DrainEvery = time.Hour
		c.Workbenches.BillEvery = time.Hour
	})
	ctx := context.Background()
	lin, err := p.srv.Store.CreateUser(ctx, models.NewUser{Username: "lin", Password: "lin-password-1", Role: models.RoleUser})
	if err != nil {
		t.Fatal(err)
	}
	fl, err := p.srv.Store.FlavorByNameOrID(ctx, "1x H100 80GB HBM3")
	if err != nil {
		t.Fatal(err)
	}
	wb := &models.Workbench{Name: "waits", OwnerID: lin.ID, ImageID: 1, FlavorID: fl.ID, Token: "t", IdleTimeoutS: 3600, Priority: "interactive"}
	if err := p.srv.Store.EnqueueWorkbench(ctx, wb, nil); err != nil {
		t.Fatal(err)
	}
	g, err := p.srv.Store.CreateGroup(ctx, "cpu-only", "no GPUs")
	if err != nil {
		t.Fatal(err)
	}
	zero := int64(0)
	if err := p.srv.Store.SetQuota(ctx, models.ScopeGroup, g.ID, models.Limits{MaxGPUs: &zero}, "admin"); err != nil {
		t.Fatal(err)
	}

	ac := p.client()
	p.loginSudo(ac, "admin", adminPassword)
	if res := p.postForm(ac, "/admin/groups/"+strconv.FormatInt(g.ID, 10)+"/members", url.Values{"username": {"lin"}}); res.StatusCode != http.StatusSeeOther {
		t.Fatalf("add lin to the group: status %d", res.StatusCode)
	}
	const want = "refused while it waited: your quota allows at most 0 GPUs at once"
	deadline := time.Now().Add(time.Minute)
	for {
		got, err := p.srv.Store.WorkbenchByID(ctx, wb.ID)
		if err != nil {
			t.Fatal(err)
		}
		if got.State == models.StateFailed {
			if got.Reason != want {
				t.Fatalf("reason %q, want %q", got.Reason, want)
			}
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("lin's launch is still %s a minute after joining a group that allows no GPUs", got.State)
		}
		time.Sleep(20 * time.Millisecond)
	}
}
