package web_test

import (
	"context"
	"net/http"
	"net/url"
	"strings"
	"testing"

	"github.com/chromedp/chromedp"

	"workbench/models"
)

// TestBrowserDeletedNotebookBookmark: a person opens the bookmark of a
// notebook whose workbench they deleted, over plain HTTP on a host name
// (no Fetch Metadata, as on a lab server): the tab shows the portal's
// not-found page, and its forms work there — the language switch (the
// page sends only its origin as Referer, so the portal does not take the
// post for a notebook's) and Log out — and its link leads to the list.
func TestBrowserDeletedNotebookBookmark(t *testing.T) {
	p := newPortal(t)
	ctx := context.Background()
	tokenFor(t, p, "alice", "user")
	alice, _ := p.srv.Store.UserByUsername(ctx, "alice")
	wb := p.runningRecord(alice, "old", models.GPUNeed{})
	if err := p.srv.Manager.Delete(ctx, wb.ID, alice, false); err != nil {
		t.Fatalf("delete: %v", err)
	}
	u, _ := url.Parse(p.ts.URL)
	base := "http://portal.test:" + u.Port()
	b := btNewBrowserWithin(t, btTimeout, chromedp.Flag("host-resolver-rules", "MAP portal.test 127.0.0.1"))
	btNavigate(t, b, base+"/login")
	if resp := btLogin(t, b, "alice", "alice-password"); resp.Status != http.StatusOK {
		t.Fatalf("login: status %d", resp.Status)
	}

	bookmark := "/wb/" + wb.ID + "/lab/tree/work.ipynb"
	if resp := btNavigate(t, b, base+bookmark); resp.Status != http.StatusNotFound {
		t.Fatalf("the bookmark: status %d, want 404", resp.Status)
	}
	if msg := btText(t, b, `[data-testid=error]`); !strings.Contains(msg, "deleted") {
		t.Fatalf("the page says %q, want that it may have been deleted", msg)
	}
	resp := btSubmit(t, b, "switch to Chinese", chromedp.Click(chromedp.CSS(`[data-testid=lang-zh-CN]`)))
	if resp.Status != http.StatusNotFound || btLocation(t, b).Path != "/wb/"+wb.ID+"/lab/tree/work.ipynb" {
		t.Fatalf("after the language switch: status %d at %s, want the same page again", resp.Status, btLocation(t, b))
	}
	if msg := btText(t, b, `[data-testid=error]`); !strings.Contains(msg, "删除") {
		t.Fatalf("after the language switch the page says %q, want Chinese", msg)
	}
	resp = btSubmit(t, b, "follow the link back", chromedp.Click(chromedp.CSS(`[data-testid=error] a[href="/"]`)))
	if resp.Status != http.StatusOK || btLocation(t, b).Path != "/" {
		t.Fatalf("the link back: status %d at %s, want the list", resp.Status, btLocation(t, b))
	}
	btNavigate(t, b, base+bookmark)
	resp = btSubmit(t, b, "click Log out", chromedp.Click(chromedp.CSS(`.account form[action="/logout"] button`)))
	if resp.Status == http.StatusForbidden || btLocation(t, b).Path != "/login" {
		t.Fatalf("Log out: status %d at %s", resp.Status, btLocation(t, b))
	}
}
