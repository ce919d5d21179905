package web_test

import (
	"context"
	"encoding/json"
	"io"
	"net/http"
	"net/url"
	"strings"
	"testing"

	"github.com/PuerkitoBio/goquery"

	"workbench/internal/testsupport/testimages"
	"workbench/models"
)

// A port the user declares on their own workbench (the image declares
// none): unreachable until declared; then the owner reaches it through
// /wb/{id}/port/6006/ with the same stripping, owner-only and cross-origin
// rules as an image's port, and the page shows it as a button; another user
// can neither declare ports on it nor reach them; bad ports are refused
// with a clear error; a removed port is unreachable again.
func TestUserDeclaredExtraPort(t *testing.T) {
	p, _ := enginePortal(t)
	ctx := context.Background()
	fake, err := p.srv.Store.ImageByNameOrID(ctx, "fake")
	if err != nil {
		t.Fatal(err)
	}
	// The app listens on 6006, but the image does not declare the port.
	if err := p.srv.Store.CreateImage(ctx, &models.Image{Name: "fake-app", Image: fake.Image, StartCommand: testimages.FakeJupyterStartCommand + " --extra-port=6006",
		RunAsUser: "1000", HomePath: testimages.FakeJupyterHome, Enabled: true}); err != nil {
		t.Fatal(err)
	}
	alice := tokenFor(t, p, "alice", "user")
	bob := tokenFor(t, p, "bob", "user")
	code, wb := p.api("POST", "/api/v1/workbenches", alice, `{"name":"app","image":"fake-app","flavor":"CPU small"}`)
	if code != 202 {
		t.Fatalf("launch: %d %v", code, wb)
	}
	id := wb["id"].(string)
	waitState(t, p, alice, id, "running")
	ac := p.client()
	p.login(ac, "alice", "alice-password")
	if res, body := p.get(ac, "/wb/"+id+"/port/6006/"); res.StatusCode != 404 || !strings.Contains(body, "serves no app on that port") {
		t.Fatalf("undeclared port: %d, want 404 saying the port (not the workbench) is missing: %.300s", res.StatusCode, body)
	}

	// Cross-origin form posts never declare a port.
	req, _ := http.NewRequest(http.MethodPost, p.ts.URL+"/workbenches/"+id+"/ports", strings.NewReader("port=6006"))
	req.Header.Set("Content-Type", "application/x-www-form-urlencoded")
	req.Header.Set("Origin", "https://evil.example")
	req.Header.Set("Sec-Fetch-Site", "cross-site")
	if res, err := ac.Do(req); err != nil || res.StatusCode != http.StatusForbidden {
		t.Fatalf("cross-origin port add: %v %v", res.StatusCode, err)
	}
	if code, _ := p.api("PUT", "/api/v1/workbenches/"+id+"/ports", bob, `{"ports":[6006]}`); code != 404 {
		t.Fatalf("bob declared a port on alice's workbench: %d", code)
	}
	// {} names no ports: refused, not taken for "remove them all".
	for _, bad := range []string{`{"ports":[80]}`, `{"ports":[8888]}`, `{"ports":[6006,6006]}`, `{}`} {
		if code, body := p.api("PUT", "/api/v1/workbenches/"+id+"/ports", alice, bad); code != 400 || errCode(body) == "" {
			t.Errorf("bad ports %s: %d %v", bad, code, body)
		}
	}
	if res := p.postForm(ac, "/workbenches/"+id+"/ports", url.Values{"port": {"6006"}}); res.StatusCode != http.StatusSeeOther {
		t.Fatalf("add port from the page: %d", res.StatusCode)
	}
	// The same port again says so, rather than nothing.
	p.postForm(ac, "/workbenches/"+id+"/ports", url.Values{"port": {"6006"}})
	if _, page := p.get(ac, "/workbenches/"+id); !strings.Contains(mpDoc(t, page).Find(`[data-testid=flash]`).Text(), "already declared") {
		t.Error("adding a declared port again gives no notice")
	}

	// Without its slash the app's root is redirected to it, as /wb/{id} is:
	// relative links resolve against the app's root only with it.
	if res, _ := p.get(ac, "/wb/"+id+"/port/6006?x=1"); res.StatusCode != http.StatusPermanentRedirect || res.Header.Get("Location") != "/wb/"+id+"/port/6006/?x=1" {
		t.Errorf("port without its slash: %d to %q, want 308 to the slash", res.StatusCode, res.Header.Get("Location"))
	}
	res, body := p.get(ac, "/wb/"+id+"/port/6006/data?x=1")
	var got map[string]any
	if res.StatusCode != 200 || json.Unmarshal([]byte(body), &got) != nil || got["app"] != "extra-port" || got["path"] != "/data" {
		t.Fatalf("owner GET declared port: %d %s", res.StatusCode, body)
	}
	if got["authorization"] != "" || strings.Contains(got["cookie"].(string), "workbench_session") {
		t.Fatalf("credentials leaked to the app: %v", got)
	}
	req, _ = http.NewRequest(http.MethodPost, p.ts.URL+"/wb/"+id+"/port/6006/api", strings.NewReader("x=1"))
	req.Header.Set("Content-Type", "application/x-www-form-urlencoded")
	req.Header.Set("Origin", "https://evil.example")
	req.Header.Set("Sec-Fetch-Site", "cross-site")
	if res, err := ac.Do(req); err != nil || res.StatusCode != http.StatusForbidden {
		t.Fatalf("cross-origin POST to the declared port: %v %v", res.StatusCode, err)
	}
	bc := p.client()
	p.login(bc, "bob", "bob-password")
	if res, _ := p.get(bc, "/wb/"+id+"/port/6006/"); res.StatusCode != 404 {
		t.Fatalf("bob reached alice's declared port: %d", res.StatusCode)
	}
	_, page := p.get(ac, "/workbenches/"+id)
	doc, _ := goquery.NewDocumentFromReader(strings.NewReader(page))
	if href, _ := doc.Find(`[data-testid="port-button"]`).Attr("href"); href != "/wb/"+id+"/port/6006/" {
		t.Fatalf("port button: %q", href)
	}
	if doc.Find(`[data-testid="user-port-remove"]`).Length() != 1 {
		t.Fatalf("no remove button for the declared port")
	}

	// A declared port nothing listens on: the page says so and how to fix
	// it, not that JupyterLab is starting (the workbench runs).
	if res := p.postForm(ac, "/workbenches/"+id+"/ports", url.Values{"port": {"7007"}}); res.StatusCode != http.StatusSeeOther {
		t.Fatalf("add port 7007: %d", res.StatusCode)
	}
	req, _ = http.NewRequest(http.MethodGet, p.ts.URL+"/wb/"+id+"/port/7007/", nil)
	req.Header.Set("Accept", "text/html")
	res, err = ac.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	silent, _ := io.ReadAll(res.Body)
	res.Body.Close()
	if res.StatusCode != http.StatusBadGateway || !strings.Contains(string(silent), "Nothing on port 7007 yet") ||
		!strings.Contains(string(silent), "0.0.0.0:7007") || strings.Contains(string(silent), "JupyterLab") {
		t.Fatalf("a port nothing listens on: %d %s", res.StatusCode, silent)
	}

	if res := p.postForm(ac, "/workbenches/"+id+"/ports/6006/delete", nil); res.StatusCode != http.StatusSeeOther {
		t.Fatalf("remove port: %d", res.StatusCode)
	}
	if res, _ := p.get(ac, "/wb/"+id+"/port/6006/"); res.StatusCode != 404 {
		t.Fatalf("removed port still reachable: %d", res.StatusCode)
	}
}
