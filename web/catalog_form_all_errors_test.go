package web_test

import (
	"net/http"
	"net/url"
	"testing"
)

// The catalog's forms show every field at fault at once: an image saved
// empty named its name, then (once fixed) its image reference, one
// submission each; a flavor likewise.
func TestCatalogFormsShowEveryBadField(t *testing.T) {
	p := newPortal(t)
	c := p.client()
	p.loginSudo(c, "admin", adminPassword)
	res, page := p.postFormBody(c, "/admin/images", url.Values{"name": {""}, "image": {""}, "run_as_user": {"root"}, "enabled": {"true"}})
	doc := parseHTML(t, page)
	if res.StatusCode != http.StatusBadRequest {
		t.Fatalf("empty image: %d", res.StatusCode)
	}
	for _, f := range []string{"name", "image", "run_as_user"} {
		if doc.Find(`[data-testid=error-`+f+`]`).Length() != 1 {
			t.Errorf("the image form does not say what is wrong with %s", f)
		}
	}
	res, page = p.postFormBody(c, "/admin/flavors", url.Values{"name": {"!"}, "gpu_count": {"0"}, "cpu_cores": {"0.01"}, "memory_gib": {"1"},
		"shm_mib": {"4096"}, "enabled": {"true"}})
	doc = parseHTML(t, page)
	if res.StatusCode != http.StatusBadRequest {
		t.Fatalf("bad flavor: %d", res.StatusCode)
	}
	for _, f := range []string{"name", "cpu_cores", "shm_mib"} {
		if doc.Find(`[data-testid=error-`+f+`]`).Length() != 1 {
			t.Errorf("the flavor form does not say what is wrong with %s", f)
		}
	}
}
