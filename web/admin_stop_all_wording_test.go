package web_test

import (
	"context"
	"net/url"
	"strings"
	"testing"

	"workbench/models"
)

// "Stop all shown" asks in the singular when the group runs one
// workbench ("Stop the running workbench of ml101?", not "the 1 running
// workbenches"), in the plural for more; the question page changes
// nothing.
func TestStopAllAsksInTheSingularForOne(t *testing.T) {
	p := newPortal(t)
	ctx := context.Background()
	st := p.srv.Store
	g, err := st.CreateGroup(ctx, "ml101", "")
	if err != nil {
		t.Fatal(err)
	}
	stu, err := st.CreateUser(ctx, models.NewUser{Username: "stu1", Password: "stu1-password-1"})
	if err != nil {
		t.Fatal(err)
	}
	if err := st.AddGroupMember(ctx, g.ID, stu.ID); err != nil {
		t.Fatal(err)
	}
	p.runningRecord(stu, "lab1", models.GPUNeed{})
	c, _ := mpAdmin(t, p)
	ask := func() string {
		t.Helper()
		_, body := p.postFormBody(c, "/admin/workbenches/stop-all", url.Values{"group": {"ml101"}})
		doc := mpDoc(t, body)
		return strings.TrimSpace(doc.Find(`[data-testid=confirm-question]`).Text())
	}
	if q := ask(); q != "Stop the running workbench of ml101? Its owner is told." {
		t.Errorf("one running: asked %q", q)
	}
	p.runningRecord(stu, "lab2", models.GPUNeed{})
	if q := ask(); q != "Stop the 2 running workbenches of ml101? Their owners are told." {
		t.Errorf("two running: asked %q", q)
	}
	running, err := st.GroupMembersRunning(ctx, g.ID)
	if err != nil || len(running) != 2 {
		t.Fatalf("after the questions %d running (%v); want both still running", len(running), err)
	}
}
