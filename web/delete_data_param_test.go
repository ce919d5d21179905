package web_test

import (
	"context"
	"net/http"
	"net/url"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/PuerkitoBio/goquery"

	"workbench/models"
)

// TestDeleteDataTakesAYesOrANo: "delete my data" is read as a yes or a
// no — a checkbox's "on" and a form's 1 delete the data too (they kept
// it without a word); a value that is neither is refused before anything
// is deleted; and the flash says whether the home data went.
func TestDeleteDataTakesAYesOrANo(t *testing.T) {
	p := newPortal(t)
	tokenFor(t, p, "alice", "user")
	ctx := context.Background()
	alice, _ := p.srv.Store.UserByUsername(ctx, "alice")
	stopped := func(name string) *models.Workbench {
		wb := p.runningRecord(alice, name, models.GPUNeed{})
		if err := p.srv.Store.SetWorkbenchState(ctx, wb.ID, models.StateStopped, 0, "", nil); err != nil {
			t.Fatal(err)
		}
		return wb
	}
	keep, odd := stopped("keep"), stopped("odd")
	c := p.client()
	p.login(c, "alice", "alice-password")

	res, body := p.postFormBody(c, "/workbenches/"+odd.ID+"/delete", url.Values{"delete_data": {"maybe"}})
	if res.StatusCode != http.StatusBadRequest || !strings.Contains(body, "must be true or false (nothing was deleted)") {
		t.Errorf("delete_data=maybe: %d, want 400 saying nothing was deleted", res.StatusCode)
	}
	if _, err := p.srv.Store.WorkbenchByID(ctx, odd.ID); err != nil {
		t.Errorf("delete_data=maybe deleted the workbench: %v", err)
	}

	// Keeping the data, the workbench still goes for good: a form that no
	// script marked answered gets the question, and nothing goes.
	res, body = p.postFormBody(c, "/workbenches/"+keep.ID+"/delete", url.Values{})
	if res.StatusCode != http.StatusOK || mpDoc(t, body).Find("[data-testid=confirm] [data-testid=confirm-yes]").Length() != 1 {
		t.Fatalf("delete keep, unconfirmed: %d, want the question", res.StatusCode)
	}
	if _, err := p.srv.Store.WorkbenchByID(ctx, keep.ID); err != nil {
		t.Fatalf("the unconfirmed delete deleted the workbench: %v", err)
	}
	if res := p.postForm(c, "/workbenches/"+keep.ID+"/delete", url.Values{"confirmed": {"true"}}); res.StatusCode != http.StatusSeeOther {
		t.Fatalf("delete keep: %d", res.StatusCode)
	}
	if _, page := p.get(c, "/"); !strings.Contains(page, "Workbench keep deleted; your home data is kept.") {
		t.Error("deleting without delete_data does not say the home data is kept")
	}
	// A form that asks to delete the data without having asked the user
	// (no script ran its confirm()) gets the question, and nothing goes.
	res, body = p.postFormBody(c, "/workbenches/"+odd.ID+"/delete", url.Values{"delete_data": {"on"}})
	doc, _ := goquery.NewDocumentFromReader(strings.NewReader(body))
	if res.StatusCode != http.StatusOK || doc.Find("[data-testid=delete-data-confirm] [data-testid=delete-data-confirmed]").Length() != 1 {
		t.Fatalf("delete odd with delete_data=on, unconfirmed: %d, want the confirm page", res.StatusCode)
	}
	if _, err := p.srv.Store.WorkbenchByID(ctx, odd.ID); err != nil {
		t.Fatalf("the unconfirmed delete_data=on deleted the workbench: %v", err)
	}
	if res := p.postForm(c, "/workbenches/"+odd.ID+"/delete", url.Values{"delete_data": {"on"}, "data_confirmed": {"true"}}); res.StatusCode != http.StatusSeeOther {
		t.Fatalf("delete odd with delete_data=on, confirmed: %d", res.StatusCode)
	}
	if _, page := p.get(c, "/"); !strings.Contains(page, "Workbench odd deleted, and your home data with it.") {
		t.Error("delete_data=on does not delete the home data (or does not say so)")
	}

	// The API takes true or false, as its other on/off parameters: "yes"
	// from a script is refused and nothing goes.
	tok := tokenFor(t, p, "alice", "user")
	script := stopped("script")
	for _, v := range []string{"yes", "1", "on"} {
		if code, out := p.api("DELETE", "/api/v1/workbenches/"+script.ID+"?delete_data="+v, tok, ""); code != http.StatusBadRequest || errCode(out) != "invalid_delete_data" {
			t.Errorf("API delete_data=%s: %d %v, want 400 invalid_delete_data", v, code, out)
		}
	}
	if _, err := p.srv.Store.WorkbenchByID(ctx, script.ID); err != nil {
		t.Errorf("a refused API delete deleted the workbench: %v", err)
	}
}

// TestStatementNamesDeletedWorkbenches: a line of a deleted workbench on
// the usage page names it, as the summary does (it showed the bare id).
func TestStatementNamesDeletedWorkbenches(t *testing.T) {
	p := newPortal(t)
	tokenFor(t, p, "alice", "user")
	ctx := context.Background()
	alice, _ := p.srv.Store.UserByUsername(ctx, "alice")
	wb := p.runningRecord(alice, "gone-exp", models.GPUNeed{})
	if _, err := p.srv.Store.Credit(ctx, alice.ID, 1_000_000, wb.ID, "node down", "admin"); err != nil {
		t.Fatal(err)
	}
	if err := p.srv.Store.MarkWorkbenchDeleted(ctx, wb.ID, time.Time{}); err != nil {
		t.Fatal(err)
	}
	c := p.client()
	p.login(c, "alice", "alice-password")
	_, page := p.get(c, "/usage")
	var cells []string
	mpDoc(t, page).Find(`[data-testid=statement-row] td:nth-child(2)`).Each(func(_ int, s *goquery.Selection) {
		cells = append(cells, strings.TrimSpace(s.Text()))
	})
	if !slices.Contains(cells, "gone-exp") || slices.Contains(cells, wb.ID) {
		t.Errorf("statement workbench cells %q, want the deleted workbench's name", cells)
	}
}
