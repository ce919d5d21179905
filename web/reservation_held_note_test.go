package web_test

import (
	"context"
	"net/http"
	"strings"
	"testing"
	"time"

	"workbench/models"
)

// A booking made while its holder already runs workbenches on its kind of
// unit: those units count toward it (it guarantees that many at once), so
// the confirmation says how many it keeps back for new launches — a
// walk-through booked 2 GPUs while running 2 and was then refused a third.
func TestBookingSaysWhatRunningWorkbenchesAlreadyHold(t *testing.T) {
	p := newPortal(t)
	bg := context.Background()
	tokenFor(t, p, "bob", models.RoleUser)
	bob, _ := p.srv.Store.UserByUsername(bg, "bob")
	adminTok := tokenFor(t, p, "admin", "admin")
	_, gpus := p.api("GET", "/api/v1/gpus", adminTok, "")
	uuid := gpus["items"].([]any)[0].(map[string]any)["uuid"].(string)
	fl, err := p.srv.Store.FlavorByNameOrID(bg, "1x H100 80GB HBM3")
	if err != nil {
		t.Fatal(err)
	}
	wb := &models.Workbench{Name: "runs", OwnerID: bob.ID, ImageID: 1, FlavorID: fl.ID, Token: "t"}
	if err := p.srv.Store.CreateWorkbench(bg, wb, models.GPUNeed{Model: fl.GPUModel, Count: 1, Candidates: []string{uuid}}, nil); err != nil {
		t.Fatal(err)
	}
	if err := p.srv.Store.SetWorkbenchState(bg, wb.ID, models.StateRunning, 100, "", map[string]any{"started_at": time.Now().UTC()}); err != nil {
		t.Fatal(err)
	}
	c := p.client()
	p.login(c, "bob", "bob-password")
	now := time.Now().UTC()
	book := func(units int, start time.Time) string {
		t.Helper()
		res := p.postForm(c, "/reservations", resvForm(resvH100, units, start, start.Add(time.Hour), ""))
		if res.StatusCode != http.StatusSeeOther {
			t.Fatalf("booking %d: %d", units, res.StatusCode)
		}
		_, page := p.get(c, "/gpus")
		return strings.TrimSpace(mpDoc(t, page).Find(`[data-testid=flash]`).Text())
	}
	if msg := book(2, now); !strings.Contains(msg, "already hold 1 of these units") || !strings.Contains(msg, "keeps 1 more back") {
		t.Errorf("booking 2 while running 1: %q", msg)
	}
	if msg := book(1, now.Add(3*time.Hour)); strings.Contains(msg, "already hold") {
		t.Errorf("a booking that opens later says %q", msg)
	}
}
