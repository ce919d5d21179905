package web_test

import (
	"context"
	"net/http"
	"net/url"
	"slices"
	"testing"
)

// An admin declares extra ports in the image form: a bad list is shown
// back with its error, a good one is stored sorted and shown on edit.
func TestImageFormExtraPorts(t *testing.T) {
	p := newPortal(t)
	ctx := context.Background()
	c := p.client()
	p.loginSudo(c, "admin", adminPassword)
	form := url.Values{"name": {"TB"}, "image": {"registry.example.org/ml/tb:1"}, "enabled": {"true"},
		"start_command": {"jupyter lab --port={port} --ServerApp.base_url={base_url} --IdentityProvider.token={token}"},
		"run_as_user":   {"1000"}, "home_path": {"/home/jovyan"}, "open_path": {"/lab"}, "extra_ports": {"6006, 80"}}
	res, page := p.postFormBody(c, "/admin/images", form)
	doc := parseHTML(t, page)
	if v, _ := doc.Find(`input[name=extra_ports]`).Attr("value"); res.StatusCode != http.StatusBadRequest || v != "6006, 80" ||
		doc.Find(`[data-testid=error-extra_ports]`).Length() != 1 {
		t.Fatalf("bad ports: status %d, value %q, error %q", res.StatusCode, v, doc.Find(`[data-testid=error-extra_ports]`).Text())
	}
	form.Set("extra_ports", "8050, 6006")
	if res, page := p.postFormBody(c, "/admin/images", form); res.StatusCode != http.StatusSeeOther {
		t.Fatalf("save: %d %s", res.StatusCode, page)
	}
	img, err := p.srv.Store.ImageByNameOrID(ctx, "TB")
	if err != nil || !slices.Equal(img.ExtraPorts, []int{6006, 8050}) {
		t.Fatalf("stored ports %v %v", img.ExtraPorts, err)
	}
	_, page = p.get(c, "/admin/images/"+itoa(img.ID)+"/edit")
	if v, _ := parseHTML(t, page).Find(`input[name=extra_ports]`).Attr("value"); v != "6006, 8050" {
		t.Fatalf("edit form shows %q", v)
	}
}
