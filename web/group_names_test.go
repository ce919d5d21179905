package web_test

import (
	"net/http"
	"net/url"
	"strings"
	"testing"
)

// A lab admin names a group in Chinese on the groups page, finds it there
// and on the quota console, and sets its quota through the API by that
// name.
func TestChineseGroupName(t *testing.T) {
	p := newPortal(t)
	admin := p.client()
	p.loginSudo(admin, "admin", adminPassword)
	if res := p.postForm(admin, "/admin/groups", url.Values{"name": {"视觉组"}, "description": {"计算机视觉"}}); res.StatusCode != http.StatusSeeOther {
		t.Fatalf("create group 视觉组: %d", res.StatusCode)
	}
	if _, body := p.get(admin, "/admin/groups"); !strings.Contains(body, "视觉组") {
		t.Fatal("the groups page does not list 视觉组")
	}
	tok := tokenFor(t, p, "admin", "admin")
	path := "/api/v1/admin/quotas/groups/" + url.PathEscape("视觉组")
	if code, out := p.api("PUT", path, tok, `{"max_gpus":2}`); code != 200 {
		t.Fatalf("PUT %s: %d %v", path, code, out)
	}
	if code, out := p.api("GET", path, tok, ""); code != 200 || out["quota"].(map[string]any)["max_gpus"] != float64(2) {
		t.Fatalf("GET %s: %d %v", path, code, out)
	}
	if _, body := p.get(admin, "/admin/quotas?q="+url.QueryEscape("视觉")); !strings.Contains(body, "视觉组") {
		t.Fatal("the quota console does not find 视觉组")
	}
}
