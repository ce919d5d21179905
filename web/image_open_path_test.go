package web_test

import (
	"io"

	"github.com/PuerkitoBio/goquery"

	"context"
	"net/http"
	"net/url"
	"strings"
	"testing"

	"workbench/models"
)

// open_path travels from the API and the catalog form to the database and
// back, bad paths are refused with a field error, and the Open button of a
// workbench goes to /wb/{id}{open_path} named after the tool.
func TestImageOpenPathRoundTrip(t *testing.T) {
	p := newPortal(t)
	ctx := context.Background()
	admin := tokenFor(t, p, "admin", "admin")
	body := func(name, openPath string) string {
		s := `{"name":"` + name + `","image":"registry.example.org/ml/nb:1","start_command":"jupyter notebook --port={port} --NotebookApp.base_url={base_url} --NotebookApp.token={token}"`
		if openPath != "" {
			s += `,"open_path":` + openPath
		}
		return s + `,"enabled":true}`
	}

	// API: default, explicit value, update, list.
	code, img := p.api("POST", "/api/v1/images", admin, body("Default", ""))
	if code != 201 || img["open_path"] != "/lab" {
		t.Fatalf("image without open_path: %d open_path=%v", code, img["open_path"])
	}
	code, img = p.api("POST", "/api/v1/images", admin, body("Classic", `"/tree"`))
	if code != 201 || img["open_path"] != "/tree" {
		t.Fatalf("create with /tree: %d %v", code, img)
	}
	id := itoa(int64(img["id"].(float64)))
	if code, img = p.api("PUT", "/api/v1/images/"+id, admin, body("Classic", `"/vscode/"`)); code != 200 || img["open_path"] != "/vscode/" {
		t.Fatalf("update to /vscode/: %d %v", code, img)
	}
	_, list := p.api("GET", "/api/v1/images", admin, "")
	found := false
	for _, it := range list["items"].([]any) {
		m := it.(map[string]any)
		found = found || (m["name"] == "Classic" && m["open_path"] == "/vscode/")
	}
	if !found {
		t.Fatalf("the image list does not carry open_path /vscode/: %v", list)
	}
	for _, bad := range []string{`"lab"`, `"//evil.example/"`, `"/\\evil.example"`, `"javascript:alert(1)"`, `"/x:y"`, `"/la b"`, `"/lab\u0007"`, `"/l\nab"`} {
		if code, res := p.api("PUT", "/api/v1/images/"+id, admin, body("Classic", bad)); code != 400 || errCode(res) != "invalid_open_path" {
			t.Errorf("open_path %s: %d %v, want 400 invalid_open_path", bad, code, res)
		}
	}
	if got, _ := p.srv.Store.ImageByNameOrID(ctx, "Classic"); got.OpenPath != "/vscode/" {
		t.Fatalf("a refused update changed open_path to %q", got.OpenPath)
	}

	// Form: the edit form shows the value; a save stores it; a bad one is
	// shown back with its error.
	c := p.client()
	p.loginSudo(c, "admin", adminPassword)
	res, page := p.get(c, "/admin/images/"+id+"/edit")
	doc := parseHTML(t, page)
	if v, _ := doc.Find(`input[name=open_path]`).Attr("value"); res.StatusCode != 200 || v != "/vscode/" {
		t.Fatalf("edit form open_path %q (status %d)", v, res.StatusCode)
	}
	if doc.Find(`[data-testid=start-command-example]`).Length() != 1 || !strings.Contains(doc.Find(`[data-testid=placeholders]`).Text(), "{base_url}") {
		t.Errorf("the image form shows no worked example of the start command")
	}
	form := url.Values{"name": {"Classic"}, "image": {"registry.example.org/ml/nb:1"}, "enabled": {"true"},
		"start_command": {"jupyter notebook --port={port} --NotebookApp.base_url={base_url} --NotebookApp.token={token}"},
		"run_as_user":   {"1000"}, "home_path": {"/home/jovyan"}, "open_path": {"/tree"}}
	if res := p.postForm(c, "/admin/images/"+id, form); res.StatusCode != http.StatusSeeOther {
		t.Fatalf("save form: %d", res.StatusCode)
	}
	if got, _ := p.srv.Store.ImageByNameOrID(ctx, "Classic"); got.OpenPath != "/tree" {
		t.Fatalf("form saved open_path %q, want /tree", got.OpenPath)
	}
	form.Set("open_path", "https://evil.example/")
	req, _ := http.NewRequest("POST", p.ts.URL+"/admin/images/"+id, strings.NewReader(form.Encode()))
	req.Header.Set("Content-Type", "application/x-www-form-urlencoded")
	req.Header.Set("Sec-Fetch-Site", "same-origin")
	req.Header.Set("Origin", p.ts.URL)
	req.Header.Set("Referer", p.ts.URL+"/")      // a portal page's form
	req.Header.Set("Sec-Fetch-Mode", "navigate") // as a browser on https or localhost sends
	req.Header.Set("Sec-Fetch-Dest", "document")
	req.Header.Set("Sec-Fetch-User", "?1")
	res, err := c.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	doc = docFrom(t, res)
	if v, _ := doc.Find(`input[name=open_path]`).Attr("value"); res.StatusCode != 400 || v != "https://evil.example/" ||
		!strings.Contains(doc.Find(`.field-error`).Text(), "must start with /") {
		t.Fatalf("bad open_path in the form: status %d, value %q, errors %q", res.StatusCode, v, doc.Find(`.field-error`).Text())
	}

	// The Open button of a running workbench of that image.
	alice, err := p.srv.Store.CreateUser(ctx, models.NewUser{Username: "alice", Password: "alice-password", Role: "user"})
	if err != nil {
		t.Fatal(err)
	}
	fl, err := p.srv.Store.FlavorByNameOrID(ctx, "CPU small")
	if err != nil {
		t.Fatal(err)
	}
	cl, _ := p.srv.Store.ImageByNameOrID(ctx, "Classic")
	wb := &models.Workbench{Name: "nb", OwnerID: alice.ID, ImageID: cl.ID, FlavorID: fl.ID, Token: "t", IdleTimeoutS: 3600}
	if err := p.srv.Store.CreateWorkbench(ctx, wb, models.GPUNeed{}, nil); err != nil {
		t.Fatal(err)
	}
	if err := p.srv.Store.SetWorkbenchState(ctx, wb.ID, models.StateRunning, 100, "", nil); err != nil {
		t.Fatal(err)
	}
	ac := p.client()
	p.login(ac, "alice", "alice-password")
	_, page = p.get(ac, "/workbenches/"+wb.ID)
	open := parseHTML(t, page).Find(`[data-testid=open-jupyter]`)
	if href, _ := open.Attr("href"); href != "/wb/"+wb.ID+"/tree" || strings.TrimSpace(open.Text()) != "Open Notebook" {
		t.Fatalf("Open button: href %q text %q, want /wb/%s/tree \"Open Notebook\"", href, open.Text(), wb.ID)
	}
	_, page = p.get(ac, "/")
	if row := parseHTML(t, page).Find(`[data-testid=open-row]`); strings.TrimSpace(row.Text()) != "Open Notebook" {
		t.Errorf("list Open button text %q", row.Text())
	}
	tok := tokenFor(t, p, "alice", "user")
	if _, j := p.api("GET", "/api/v1/workbenches/"+wb.ID, tok, ""); !strings.HasSuffix(j["url"].(string), "/wb/"+wb.ID+"/tree") {
		t.Fatalf("API url %v", j["url"])
	}
}

// Errors are flashed as errors (red, role=alert), successes as successes.
func TestFlashKinds(t *testing.T) {
	p := newPortal(t)
	c := p.client()
	p.loginSudo(c, "admin", adminPassword)
	if _, err := p.srv.Store.CreateUser(context.Background(), models.NewUser{Username: "bob", Password: "bob-password-1", Role: "user"}); err != nil {
		t.Fatal(err)
	}
	bob, _ := p.srv.Store.UserByUsername(context.Background(), "bob")
	flash := func() (class, role, text string) {
		_, page := p.get(c, "/admin/users")
		f := parseHTML(t, page).Find(`[data-testid=flash]`)
		class, _ = f.Attr("class")
		role, _ = f.Attr("role")
		return class, role, f.Text()
	}
	p.postForm(c, "/admin/users/"+itoa(bob.ID)+"/password", url.Values{"password": {"x"}})
	class, role, text := flash()
	if !strings.Contains(class, "flash-error") || role != "alert" || !strings.Contains(text, "again") {
		t.Errorf("error flash: class %q role %q text %q", class, role, text)
	}
	p.postForm(c, "/admin/users/"+itoa(bob.ID)+"/password", url.Values{"password": {"a-good-long-password-2"}})
	class, role, _ = flash()
	if !strings.Contains(class, "flash-ok") || strings.Contains(class, "flash-error") || role != "status" {
		t.Errorf("success flash: class %q role %q", class, role)
	}
}

// docFrom reads and parses an HTML response.
func docFrom(t *testing.T, res *http.Response) *goquery.Document {
	t.Helper()
	defer res.Body.Close()
	b, err := io.ReadAll(res.Body)
	if err != nil {
		t.Fatal(err)
	}
	return parseHTML(t, string(b))
}
