package web_test

import (
	"context"
	"net/http"
	"strings"
	"testing"

	"github.com/PuerkitoBio/goquery"

	"workbench/models"
)

// TestNotebookTabPagesShowTheBanner: the portal's own pages served under
// /wb/ (a workbench that is not running, one that is not there) carry the
// layout's banner, "GPUs are simulated", as every other portal page does;
// before, a notebook tab on a simulated pool did not say so. In Chinese
// too.
func TestNotebookTabPagesShowTheBanner(t *testing.T) {
	p := newPortal(t)
	ctx := context.Background()
	tokenFor(t, p, "alice", "user")
	alice, _ := p.srv.Store.UserByUsername(ctx, "alice")
	wb := p.runningRecord(alice, "nb", models.GPUNeed{})
	if err := p.srv.Store.SetWorkbenchState(ctx, wb.ID, models.StateStopped, 0, "stopped by you", nil); err != nil {
		t.Fatal(err)
	}
	c := p.client()
	p.login(c, "alice", "alice-password")
	open := func(path, lang string) *goquery.Document {
		t.Helper()
		req, _ := http.NewRequest(http.MethodGet, p.ts.URL+path, nil)
		req.Header.Set("Accept", "text/html")
		req.Header.Set("Accept-Language", lang)
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
	text := func(s *goquery.Selection) string { return strings.Join(strings.Fields(s.Text()), " ") }
	for _, lang := range []string{"en", "zh-CN"} {
		want := text(open("/", lang).Find(`[data-testid=banner]`))
		if !strings.Contains(want, "simulated") && !strings.Contains(want, "模拟") {
			t.Fatalf("%s: the home page's banner %q does not say the GPUs are simulated", lang, want)
		}
		notRunning := open("/wb/"+wb.ID+"/lab", lang)
		if notRunning.Find(`[data-testid=not-running]`).Length() != 1 {
			t.Fatalf("%s: /wb/%s/lab is not the not-running page", lang, wb.ID)
		}
		if got := text(notRunning.Find(`[data-testid=banner]`)); got != want {
			t.Errorf("%s: the not-running page's banner %q, want %q", lang, got, want)
		}
		notFound := open("/wb/abcdefghijklm/lab", lang)
		if notFound.Find(`[data-testid=error]`).Length() != 1 {
			t.Fatalf("%s: /wb/abcdefghijklm/lab is not the not-found page", lang)
		}
		if got := text(notFound.Find(`[data-testid=banner]`)); got != want {
			t.Errorf("%s: the not-found page's banner %q, want %q", lang, got, want)
		}
	}
}
