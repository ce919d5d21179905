package web_test

import (
	"context"
	"net/http"
	"net/url"
	"strings"
	"testing"

	"workbench/models"
)

// A user's workbenches share one home volume, and the manager refuses to
// delete it while another workbench exists. The page says so up front —
// which workbenches use it — instead of offering "also delete my data" and
// refusing after the person confirmed that every file would be lost.
func TestDeleteDataNotOfferedWhileTheHomeIsShared(t *testing.T) {
	p := newPortal(t)
	bg := context.Background()
	tokenFor(t, p, "rosa", models.RoleUser)
	rosa, _ := p.srv.Store.UserByUsername(bg, "rosa")
	fl, err := p.srv.Store.FlavorByNameOrID(bg, "1x H100 80GB HBM3")
	if err != nil {
		t.Fatal(err)
	}
	stopped := func(name string) *models.Workbench {
		wb := &models.Workbench{Name: name, OwnerID: rosa.ID, ImageID: 1, FlavorID: fl.ID, Token: "t", IdleTimeoutS: 3600}
		if err := p.srv.Store.CreateWorkbench(bg, wb, models.GPUNeed{}, nil); err != nil {
			t.Fatal(err)
		}
		if err := p.srv.Store.SetWorkbenchState(bg, wb.ID, models.StateStopped, 0, "stopped by its owner", nil); err != nil {
			t.Fatal(err)
		}
		return wb
	}
	exp1, big := stopped("exp1"), stopped("big")
	c := p.client()
	p.login(c, "rosa", "rosa-password")

	_, page := p.get(c, "/workbenches/"+exp1.ID)
	doc := mpDoc(t, page)
	if doc.Find(`[data-testid=delete-data]`).Length() != 0 {
		t.Error("exp1's page offers to delete the home volume big uses too")
	}
	if note := doc.Find(`[data-testid=delete-data-shared]`).Text(); !strings.Contains(note, "big") {
		t.Errorf("exp1's page says %q of the shared home, want big named", note)
	}

	if res := p.postForm(c, "/workbenches/"+big.ID+"/delete", url.Values{"confirmed": {"true"}}); res.StatusCode != http.StatusSeeOther {
		t.Fatalf("delete big: %d", res.StatusCode)
	}
	_, page = p.get(c, "/workbenches/"+exp1.ID)
	doc = mpDoc(t, page)
	if doc.Find(`[data-testid=delete-data]`).Length() != 1 || doc.Find(`[data-testid=delete-data-shared]`).Length() != 0 {
		t.Error("exp1, now rosa's only workbench, does not offer to delete her data")
	}
}
