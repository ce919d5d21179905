package web_test

import (
	"context"
	"fmt"
	"net/http"
	"net/url"
	"strings"
	"testing"

	"workbench/models"
)

// A force stop (unsaved work in memory is lost) and the deletion of a
// cloud price ask first without JavaScript too: the page's confirm() was
// their only question, and a form posted with script off acted at the
// click. The portal's question page answers instead, and nothing happens
// until its Yes posts the form again with confirmed=true.
func TestForceStopAndCloudPriceDeleteAskFirst(t *testing.T) {
	p := newPortal(t)
	ctx := context.Background()
	tokenFor(t, p, "alice", "user")
	adminTok := tokenFor(t, p, "admin", "admin")
	alice, err := p.srv.Store.UserByUsername(ctx, "alice")
	if err != nil {
		t.Fatal(err)
	}
	wb := &models.Workbench{Name: "long-run", OwnerID: alice.ID, ImageID: 1, FlavorID: 1}
	if err := p.srv.Store.CreateWorkbench(ctx, wb, models.GPUNeed{}, nil); err != nil {
		t.Fatal(err)
	}
	c := p.client()
	p.login(c, "alice", "alice-password")
	res, body := p.postFormBody(c, "/workbenches/"+wb.ID+"/stop", url.Values{"force": {"true"}})
	got, err := p.srv.Store.WorkbenchByID(ctx, wb.ID)
	if res.StatusCode != http.StatusOK || !strings.Contains(body, "Kill the container now? Unsaved work in its memory is lost.") || err != nil || got.State != wb.State {
		t.Fatalf("force stop without the page's yes: %d, state %s (was %s), question asked %v", res.StatusCode, got.State, wb.State, strings.Contains(body, "Kill the container now?"))
	}
	if !strings.Contains(body, `name="confirmed" value="true"`) || !strings.Contains(body, `name="force" value="true"`) {
		t.Errorf("the question's Yes does not post the force stop again answered")
	}

	code, out := p.api("POST", "/api/v1/admin/cloud-prices", adminTok,
		`{"provider":"Acme","offer":"a1","gpu_model":"NVIDIA H100 80GB HBM3","tier":"on-demand","currency":"USD","price_per_gpu_hour":"2.5","source":"test"}`)
	if code != http.StatusCreated && code != http.StatusOK {
		t.Fatalf("add a cloud price: %d %v", code, out)
	}
	id := int64(num(out["id"]))
	admin := p.client()
	p.loginSudo(admin, "admin", adminPassword)
	del := fmt.Sprintf("/admin/cloud-prices/%d/delete", id)
	res, body = p.postFormBody(admin, del, url.Values{})
	if _, err := p.srv.Store.CloudPriceByID(ctx, id); res.StatusCode != http.StatusOK || !strings.Contains(body, "Delete Acme a1") || err != nil {
		t.Fatalf("delete without the page's yes: %d, still there: %v", res.StatusCode, err == nil)
	}
	if res := p.postForm(admin, del, url.Values{"confirmed": {"true"}}); res.StatusCode != http.StatusSeeOther {
		t.Fatalf("delete answered yes: %d", res.StatusCode)
	}
	if _, err := p.srv.Store.CloudPriceByID(ctx, id); err == nil {
		t.Errorf("the cloud price is still there after yes")
	}
}

// Disabling a user (their sessions end, their work stops) and making one
// an administrator ask first without JavaScript too; enabling and taking
// the role away do not (each is undone at once by the other button).
func TestDisableAndMakeAdminAskFirst(t *testing.T) {
	p := newPortal(t)
	ctx := context.Background()
	tokenFor(t, p, "admin", "admin")
	tokenFor(t, p, "bob", "user")
	bob, err := p.srv.Store.UserByUsername(ctx, "bob")
	if err != nil {
		t.Fatal(err)
	}
	admin := p.client()
	p.loginSudo(admin, "admin", adminPassword)
	for _, step := range []struct {
		path, field, value, question string
		changed                      func(*models.User) bool
	}{
		{"disable", "disabled", "true", "Disable bob?", func(u *models.User) bool { return u.Disabled }},
		{"role", "role", "admin", "Make bob an administrator?", func(u *models.User) bool { return u.Role == models.RoleAdmin }},
	} {
		path := fmt.Sprintf("/admin/users/%d/%s", bob.ID, step.path)
		res, body := p.postFormBody(admin, path, url.Values{step.field: {step.value}})
		u, err := p.srv.Store.UserByID(ctx, bob.ID)
		if err != nil {
			t.Fatal(err)
		}
		if res.StatusCode != http.StatusOK || !strings.Contains(body, step.question) || step.changed(u) {
			t.Fatalf("%s without the page's yes: %d, question asked %v, done %v", step.path, res.StatusCode, strings.Contains(body, step.question), step.changed(u))
		}
		if res := p.postForm(admin, path, url.Values{step.field: {step.value}, "confirmed": {"true"}}); res.StatusCode != http.StatusSeeOther {
			t.Fatalf("%s answered yes: %d", step.path, res.StatusCode)
		}
		if u, err = p.srv.Store.UserByID(ctx, bob.ID); err != nil || !step.changed(u) {
			t.Fatalf("%s answered yes did nothing (%v)", step.path, err)
		}
	}
	// Back the other way: asked nothing.
	if res := p.postForm(admin, fmt.Sprintf("/admin/users/%d/disable", bob.ID), url.Values{"disabled": {"false"}}); res.StatusCode != http.StatusSeeOther {
		t.Fatalf("enable: %d", res.StatusCode)
	}
}
