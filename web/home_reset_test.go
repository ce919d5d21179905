package web_test

import (
	"context"
	"net/http"
	"net/url"
	"strings"
	"testing"

	"github.com/docker/docker/api/types/volume"
)

// A user resets their own home volume after typing their name on a page
// that says what will be lost; it is refused while a workbench runs,
// audited, and the next start gets an empty home they can write. An admin
// can reset anyone's.
func TestResetHomeVolume(t *testing.T) {
	p, cli := enginePortal(t)
	ctx := context.Background()
	alice := tokenFor(t, p, "alice", "user")
	code, wb := p.api("POST", "/api/v1/workbenches", alice, `{"name":"notes","image":"fake","flavor":"CPU small"}`)
	if code != 202 {
		t.Fatalf("launch: %d %v", code, wb)
	}
	id := wb["id"].(string)
	waitState(t, p, alice, id, "running")
	ac := p.client()
	p.login(ac, "alice", "alice-password")
	write := func(name string) int {
		req, _ := http.NewRequest("POST", p.ts.URL+"/wb/"+id+"/api/homefile?name="+name, strings.NewReader("data"))
		req.Header.Set("Origin", p.ts.URL)
		res, err := ac.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		res.Body.Close()
		return res.StatusCode
	}
	if code := write("precious.txt"); code != http.StatusNoContent {
		t.Fatalf("write: %d", code)
	}

	// While it runs: the page says to stop it first, and a POST is refused.
	_, page := p.get(ac, "/settings/home")
	doc := parseHTML(t, page)
	if busy := doc.Find(`[data-testid=home-reset-busy]`).Text(); !strings.Contains(busy, "notes") || doc.Find(`[data-testid=home-reset-submit]`).Length() != 0 {
		t.Fatalf("reset offered while running (busy %q)", busy)
	}
	p.postForm(ac, "/settings/home/reset", url.Values{"confirm": {"alice"}})
	_, page = p.get(ac, "/settings/home")
	if f := parseHTML(t, page).Find(`[data-testid=flash]`); !strings.Contains(f.AttrOr("class", ""), "flash-error") || !strings.Contains(f.Text(), "stop notes first") {
		t.Fatalf("reset of a running workbench's home: flash %q", f.Text())
	}
	p.api("POST", "/api/v1/workbenches/"+id+"/stop", alice, "")
	waitState(t, p, alice, id, "stopped")

	// The page names what will be lost; a wrong confirmation deletes nothing.
	_, page = p.get(ac, "/settings/home")
	doc = parseHTML(t, page)
	if loss := doc.Find(`[data-testid=home-reset-loss]`).Text(); !strings.Contains(loss, "every file") || !strings.Contains(loss, "notes") || !strings.Contains(loss, "cannot be recovered") {
		t.Fatalf("confirmation does not name what is lost: %q", loss)
	}
	res := p.postForm(ac, "/settings/home/reset", url.Values{"confirm": {"yes"}})
	if res.StatusCode != http.StatusBadRequest {
		t.Fatalf("wrong confirmation: %d", res.StatusCode)
	}
	vol := "wb-home-" + installID(t, p) + "-alice"
	if _, err := cli.VolumeInspect(ctx, vol); err != nil {
		t.Fatalf("a wrong confirmation removed the volume: %v", err)
	}
	if res := p.postForm(ac, "/settings/home/reset", url.Values{"confirm": {"alice"}}); res.StatusCode != http.StatusSeeOther {
		t.Fatalf("reset: %d", res.StatusCode)
	}
	if _, err := cli.VolumeInspect(ctx, vol); err == nil {
		t.Fatal("the home volume is still there after the reset")
	}
	if entries, _ := p.srv.Store.ListAudit(ctx, 20); !auditHas(entries, "home.reset") {
		t.Error("the reset is not audited")
	}

	// Start again: an empty home, writable.
	if code, body := p.api("POST", "/api/v1/workbenches/"+id+"/start", alice, ""); code != 200 {
		t.Fatalf("start after reset: %d %v", code, body)
	}
	waitState(t, p, alice, id, "running")
	if res, _ := p.get(ac, "/wb/"+id+"/api/homefile?name=precious.txt"); res.StatusCode != http.StatusNotFound {
		t.Errorf("the old file survived the reset: %d", res.StatusCode)
	}
	if code := write("fresh.txt"); code != http.StatusNoContent {
		t.Errorf("the fresh home is not writable: %d", code)
	}

	// An admin resets alice's home once she has stopped.
	p.api("POST", "/api/v1/workbenches/"+id+"/stop", alice, "")
	waitState(t, p, alice, id, "stopped")
	c := p.client()
	p.loginSudo(c, "admin", adminPassword)
	u, _ := p.srv.Store.UserByUsername(ctx, "alice")
	_, page = p.get(c, "/admin/users/"+itoa(u.ID)+"/home")
	if h := parseHTML(t, page).Find("h1").Text(); !strings.Contains(h, "alice") {
		t.Errorf("admin page heading %q", h)
	}
	if res := p.postForm(c, "/admin/users/"+itoa(u.ID)+"/home/reset", url.Values{"confirm": {"alice"}}); res.StatusCode != http.StatusSeeOther {
		t.Fatalf("admin reset: %d", res.StatusCode)
	}
	vs, _ := cli.VolumeList(ctx, volume.ListOptions{})
	for _, v := range vs.Volumes {
		if v.Name == vol {
			t.Fatal("the admin's reset left the volume")
		}
	}
	// A user cannot reach another's reset.
	bob := p.client()
	tokenFor(t, p, "bob", "user")
	p.login(bob, "bob", "bob-password")
	if res := p.postForm(bob, "/admin/users/"+itoa(u.ID)+"/home/reset", url.Values{"confirm": {"alice"}}); res.StatusCode != http.StatusForbidden {
		t.Errorf("bob reset alice's home: %d", res.StatusCode)
	}
	p.srv.Manager.Wait()
}

func installID(t *testing.T, p *testPortal) string {
	id, err := p.srv.Store.InstallID(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	return id
}
