package web_test

import (
	"context"
	"net/http"
	"strings"
	"testing"

	"github.com/PuerkitoBio/goquery"

	"workbench/models"
)

// The portal's own pages under /wb/ (a workbench not running, one not
// there) carry the top bar's unread count as every other portal page does:
// the not-running page showed the bell without it, so a notebook tab said
// nothing of a notice (a GPU come free, a stop) waiting for its reader.
func TestNotebookTabPagesShowTheUnreadCount(t *testing.T) {
	p := newPortal(t)
	ctx := context.Background()
	tokenFor(t, p, "alice", "user")
	alice, _ := p.srv.Store.UserByUsername(ctx, "alice")
	wb := p.runningRecord(alice, "nb", models.GPUNeed{})
	if err := p.srv.Store.SetWorkbenchState(ctx, wb.ID, models.StateStopped, 0, "stopped by you", nil); err != nil {
		t.Fatal(err)
	}
	for _, m := range []string{"A GPU you watch came free.", "Your workbench nb was stopped."} {
		if err := p.srv.Store.AddNotification(ctx, alice.ID, m, "/gpus"); err != nil {
			t.Fatal(err)
		}
	}
	c := p.client()
	p.login(c, "alice", "alice-password")
	open := func(path string) *goquery.Document {
		t.Helper()
		req, _ := http.NewRequest(http.MethodGet, p.ts.URL+path, nil)
		req.Header.Set("Accept", "text/html")
		res, err := c.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		defer res.Body.Close()
		doc, err := goquery.NewDocumentFromReader(res.Body)
		if err != nil {
			t.Fatal(err)
		}
		return doc
	}
	unread := func(doc *goquery.Document) string {
		return strings.TrimSpace(doc.Find(`[data-testid=notifications-unread]`).Text())
	}
	if got := unread(open("/")); got != "2" {
		t.Fatalf("the home page's unread count %q, want 2", got)
	}
	notRunning := open("/wb/" + wb.ID + "/lab")
	if notRunning.Find(`[data-testid=not-running]`).Length() != 1 {
		t.Fatalf("/wb/%s/lab is not the not-running page", wb.ID)
	}
	if got := unread(notRunning); got != "2" {
		t.Errorf("the not-running page's unread count %q, want 2", got)
	}
	notFound := open("/wb/abcdefghijklm/lab")
	if notFound.Find(`[data-testid=error]`).Length() != 1 {
		t.Fatal("/wb/abcdefghijklm/lab is not the not-found page")
	}
	if got := unread(notFound); got != "2" {
		t.Errorf("the not-found page's unread count %q, want 2", got)
	}
}
