package web_test

import (
	"net/http"
	"net/url"
	"strings"
	"testing"
)

// The launch form sent twice (a double click, a resubmitted page) answers
// the second time like the first — to the workbench it made — instead of
// an error page saying the name is taken for a launch that worked. Another
// launch of that name (another image) is still refused.
func TestLaunchFormSentTwiceOpensTheWorkbench(t *testing.T) {
	p := newPortal(t)
	tokenFor(t, p, "alice", "user")
	p.addImage(fakeCatalogImage("fake", "example.invalid/fake:1"))
	p.addImage(fakeCatalogImage("other", "example.invalid/other:1"))
	c := p.client()
	p.login(c, "alice", "alice-password")
	form := url.Values{"image": {"fake"}, "flavor": {"CPU small"}, "name": {"twice"}}
	first := p.postForm(c, "/workbenches", form)
	loc := first.Header.Get("Location")
	if first.StatusCode != http.StatusSeeOther || !strings.HasPrefix(loc, "/workbenches/") {
		t.Fatalf("launch: %d to %q", first.StatusCode, loc)
	}
	again := p.postForm(c, "/workbenches", form)
	if again.StatusCode != http.StatusSeeOther || again.Header.Get("Location") != loc {
		t.Fatalf("the same form again: %d to %q, want the first's %q", again.StatusCode, again.Header.Get("Location"), loc)
	}
	other := url.Values{"image": {"other"}, "flavor": {"CPU small"}, "name": {"twice"}}
	res, body := p.postFormBody(c, "/workbenches", other)
	if msg := mpDoc(t, body).Find(`[data-testid=error-name]`).Text(); res.StatusCode != http.StatusBadRequest || !strings.Contains(msg, "already have a workbench with this name") {
		t.Fatalf("another launch of that name: %d %q", res.StatusCode, msg)
	}
}
