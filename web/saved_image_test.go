package web_test

import (
	"context"
	"fmt"
	"net/http"
	"strings"
	"testing"
)

// Save as image through the API and pages: the owner saves (a running
// workbench only when confirmed), sees the image with its size in her
// image list and on My images, launches from it; another user neither
// sees, launches nor deletes it until she shares it with a group they are
// both in (not with a group she is not in); an admin promotes it to the catalog, after
// which everyone sees it and it leaves the owner's quota.
func TestSaveAsImageThroughThePortal(t *testing.T) {
	p, _ := enginePortal(t)
	alice := tokenFor(t, p, "alice", "user")
	bob := tokenFor(t, p, "bob", "user")
	admin := tokenFor(t, p, "admin", "admin")
	code, wb := p.api("POST", "/api/v1/workbenches", alice, `{"name":"env","image":"fake","flavor":"CPU small"}`)
	if code != 202 {
		t.Fatalf("launch: %d %v", code, wb)
	}
	id := wb["id"].(string)
	waitState(t, p, alice, id, "running")

	if code, body := p.api("POST", "/api/v1/workbenches/"+id+"/save-image", alice, `{"name":"my-env"}`); code != 409 || errCode(body) != "invalid_state" {
		t.Errorf("save a running workbench unconfirmed: %d %v, want 409", code, body)
	}
	if code, _ := p.api("POST", "/api/v1/workbenches/"+id+"/save-image", bob, `{"name":"stolen","running_ok":true}`); code != 404 {
		t.Errorf("bob saved alice's workbench: %d", code)
	}
	if code, body := p.api("POST", "/api/v1/workbenches/"+id+"/save-image", alice, `{"name":"bad name!","running_ok":true}`); code != 400 {
		t.Errorf("bad name: %d %v", code, body)
	}
	code, img := p.api("POST", "/api/v1/workbenches/"+id+"/save-image", alice, `{"name":"my-env","running_ok":true}`)
	if code != 201 || img["name"] != "my-env v1 (alice)" || img["size_bytes"].(float64) < 0 {
		t.Fatalf("save: %d %v", code, img)
	}
	imgID := int64(img["id"].(float64))
	names := func(tok string) string {
		_, list := p.api("GET", "/api/v1/images", tok, "")
		var out []string
		for _, it := range list["items"].([]any) {
			out = append(out, it.(map[string]any)["name"].(string))
		}
		return strings.Join(out, "|")
	}
	if !strings.Contains(names(alice), "my-env v1 (alice)") || strings.Contains(names(bob), "my-env") {
		t.Errorf("image lists: alice %q, bob %q", names(alice), names(bob))
	}
	if code, body := p.api("POST", "/api/v1/workbenches", bob, `{"name":"x","image":"my-env v1 (alice)","flavor":"CPU small"}`); code != 400 {
		t.Errorf("bob launched alice's saved image: %d %v", code, body)
	}
	if code, _ := p.api("DELETE", fmt.Sprintf("/api/v1/images/%d", imgID), bob, ""); code != 404 {
		t.Errorf("bob deleted alice's image: %d", code)
	}

	ac := p.client()
	p.login(ac, "alice", "alice-password")
	res, body := p.get(ac, "/images/saved")
	if res.StatusCode != 200 || !strings.Contains(body, "my-env v1 (alice)") || !strings.Contains(body, `data-testid="saved-image-size"`) {
		t.Errorf("My images: %d %s", res.StatusCode, body)
	}
	if _, body := p.get(ac, "/workbenches/new"); !strings.Contains(body, "my-env v1 (alice)") {
		t.Errorf("the saved image is not in alice's launch form")
	}
	// The portal words the saved image's description: in Chinese too.
	zh := p.client()
	zh.Transport = acceptLanguage{"zh-CN,zh;q=0.9", http.DefaultTransport}
	p.login(zh, "alice", "alice-password")
	_, zhPage := p.get(zh, "/images/saved")
	if d := mpDoc(t, zhPage).Find(`[data-testid=saved-image-description]`).Text(); !strings.HasPrefix(d, "由 alice 从工作台 env 于 ") || !strings.HasSuffix(d, "；基于 fake。") {
		t.Errorf("the saved image's description in Chinese: %q", d)
	}

	// Shared with a group both are in, bob sees it; a group alice is not
	// in is refused.
	ctx := context.Background()
	team, err := p.srv.Store.CreateGroup(ctx, "team", "")
	if err != nil {
		t.Fatal(err)
	}
	if _, err := p.srv.Store.CreateGroup(ctx, "others", ""); err != nil {
		t.Fatal(err)
	}
	for _, name := range []string{"alice", "bob"} {
		u, _ := p.srv.Store.UserByUsername(ctx, name)
		if err := p.srv.Store.AddGroupMember(ctx, team.ID, u.ID); err != nil {
			t.Fatal(err)
		}
	}
	if code, body := p.api("PUT", fmt.Sprintf("/api/v1/images/%d/shares", imgID), alice, `{"groups":["others"]}`); code != 400 || errCode(body) != "invalid_groups" {
		t.Errorf("share with a group alice is not in: %d %v", code, body)
	}
	if code, _ := p.api("PUT", fmt.Sprintf("/api/v1/images/%d/shares", imgID), bob, `{"groups":["team"]}`); code != 404 {
		t.Errorf("bob shared alice's image: %d", code)
	}
	if code, body := p.api("PUT", fmt.Sprintf("/api/v1/images/%d/shares", imgID), alice, `{"groups":["team"]}`); code != 200 {
		t.Fatalf("share with team: %d %v", code, body)
	}
	if !strings.Contains(names(bob), "my-env v1 (alice)") {
		t.Errorf("bob (in team) does not see the shared image: %q", names(bob))
	}
	if code, body := p.api("POST", "/api/v1/workbenches", bob, `{"name":"shared","image":"my-env v1 (alice)","flavor":"CPU small"}`); code != 202 {
		t.Errorf("bob launch of the shared image: %d %v", code, body)
	} else {
		waitState(t, p, bob, body["id"].(string), "running")
		_, _ = p.api("POST", "/api/v1/workbenches/"+body["id"].(string)+"/stop", bob, "")
		waitState(t, p, bob, body["id"].(string), "stopped")
	}

	if code, body := p.api("POST", fmt.Sprintf("/api/v1/admin/images/%d/promote", imgID), admin, ""); code != 200 || body["owner_id"].(float64) != 0 {
		t.Fatalf("promote: %d %v", code, body)
	}
	if !strings.Contains(names(bob), "my-env v1 (alice)") {
		t.Errorf("bob does not see the promoted image: %q", names(bob))
	}
	if code, _ := p.api("DELETE", fmt.Sprintf("/api/v1/images/%d", imgID), alice, ""); code != 404 {
		t.Errorf("alice deleted a catalog image: %d", code)
	}
	_, _ = p.api("POST", "/api/v1/workbenches/"+id+"/stop", alice, "")
	waitState(t, p, alice, id, "stopped")
}
