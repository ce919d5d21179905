package web_test

import (
	"net/http"
	"net/url"
	"strings"
	"testing"

	"workbench/web"
)

// Where a flavor is picked from a list outside the launch form (the flavor
// watch on /notifications, the calculator), a MIG flavor reads as what it
// asks for — MIG instances — not as whole GPUs of its model ("1 × NVIDIA
// H100 80GB HBM3" had a one-instance flavor look like a whole H100).
func TestFlavorListsNameMIGInstances(t *testing.T) {
	p := newPortal(t, func(c *web.Config) { c.MockMIG = "7:1g.10gb*2" })
	tokenFor(t, p, "alice", "user")
	uc := p.client()
	p.login(uc, "alice", "alice-password")
	const mig = "1x MIG 1g.10gb (H100 80GB HBM3)"
	option := func(page, css string) string {
		t.Helper()
		o := mpDoc(t, page).Find(css + ` option[value="` + mig + `"]`)
		if o.Length() != 1 {
			t.Fatalf("no option for %s in %s", mig, css)
		}
		return strings.TrimSpace(o.Text())
	}

	_, page := p.get(uc, "/notifications")
	if got, want := option(page, `[data-testid=flavor-watch-flavor]`), mig+" (1 × MIG 1g.10gb (H100 80GB HBM3))"; got != want {
		t.Errorf("flavor watch option %q, want %q", got, want)
	}
	if got, want := option(page, `[data-testid=flavor-watch-flavor]`), "1 × NVIDIA"; strings.Contains(got, want) {
		t.Errorf("flavor watch option %q reads as a whole GPU", got)
	}
	_, page = p.get(uc, "/calculator")
	if got := option(page, `[data-testid=flavor-select]`); !strings.HasPrefix(got, mig+" — 1 × MIG 1g.10gb (H100 80GB HBM3),") {
		t.Errorf("calculator option %q, want it to name 1 MIG instance", got)
	}

	// With no watch yet the page says so instead of an empty table; the
	// table comes with the first watch.
	doc := mpDoc(t, mustGet(t, p, uc, "/notifications"))
	if doc.Find(`[data-testid=no-gpu-watches]`).Length() != 1 || doc.Find(`[data-testid=gpu-watches]`).Length() != 0 {
		t.Fatalf("no watches: empty-state %d, table %d", doc.Find(`[data-testid=no-gpu-watches]`).Length(), doc.Find(`[data-testid=gpu-watches]`).Length())
	}
	if res := p.postForm(uc, "/notifications/watches", url.Values{"flavor": {mig}}); res.StatusCode != 303 {
		t.Fatalf("watch the MIG flavor: %d", res.StatusCode)
	}
	doc = mpDoc(t, mustGet(t, p, uc, "/notifications"))
	if doc.Find(`[data-testid=no-gpu-watches]`).Length() != 0 || strings.TrimSpace(doc.Find(`[data-testid=gpu-watch-flavor]`).Text()) != mig {
		t.Fatalf("after watching: empty-state %d, row flavor %q", doc.Find(`[data-testid=no-gpu-watches]`).Length(), doc.Find(`[data-testid=gpu-watch-flavor]`).Text())
	}
}

func mustGet(t *testing.T, p *testPortal, c *http.Client, path string) string {
	t.Helper()
	res, body := p.get(c, path)
	if res.StatusCode != 200 {
		t.Fatalf("GET %s: %d", path, res.StatusCode)
	}
	return body
}
