package web_test

import (
	"context"
	"net/http"
	"net/url"
	"strings"
	"testing"
)

// TestRefusedAdminFormsKeepWhatWasTyped: a refused form comes back with
// what was typed in it, and only in it.
//   - Billing: a credit with a bad amount keeps its reason in the credit
//     form; the reversal form's reason stays empty (it was copied there).
//   - Groups: a new group whose name is taken keeps its description (it
//     came back empty).
func TestRefusedAdminFormsKeepWhatWasTyped(t *testing.T) {
	p := newPortal(t)
	admin := p.client()
	p.loginSudo(admin, "admin", adminPassword)
	tokenFor(t, p, "alice", "user")

	res, body := p.postFormBody(admin, "/admin/billing/credit", url.Values{"user": {"alice"}, "amount": {"abc"}, "reason": {"node 4 was down"}})
	doc := mpDoc(t, body)
	credit, _ := doc.Find(`[data-testid=credit-reason]`).Attr("value")
	reverse, _ := doc.Find(`[data-testid=reverse-reason]`).Attr("value")
	if res.StatusCode != http.StatusBadRequest || credit != "node 4 was down" || reverse != "" {
		t.Errorf("refused credit: %d, credit reason %q, reversal reason %q; want 400, the reason in the credit form only", res.StatusCode, credit, reverse)
	}
	res, body = p.postFormBody(admin, "/admin/billing/reverse", url.Values{"ids": {"x"}, "reason": {"charged twice"}})
	doc = mpDoc(t, body)
	credit, _ = doc.Find(`[data-testid=credit-reason]`).Attr("value")
	reverse, _ = doc.Find(`[data-testid=reverse-reason]`).Attr("value")
	if res.StatusCode != http.StatusBadRequest || credit != "" || reverse != "charged twice" {
		t.Errorf("refused reversal: %d, credit reason %q, reversal reason %q; want 400, the reason in the reversal form only", res.StatusCode, credit, reverse)
	}

	if _, err := p.srv.Store.CreateGroup(context.Background(), "ml-team", ""); err != nil {
		t.Fatal(err)
	}
	res, body = p.postFormBody(admin, "/admin/groups", url.Values{"name": {"ml-team"}, "description": {"the lab's GPUs"}})
	doc = mpDoc(t, body)
	name, _ := doc.Find(`form[action="/admin/groups"] input[name=name]`).Attr("value")
	desc, _ := doc.Find(`form[action="/admin/groups"] input[name=description]`).Attr("value")
	if res.StatusCode != http.StatusBadRequest || name != "ml-team" || desc != "the lab's GPUs" {
		t.Errorf("refused new group: %d, name %q, description %q; want 400 with both kept", res.StatusCode, name, desc)
	}
}

// TestSwitchFormsTakeOnlyTrueOrFalse: the drain and disable buttons send
// "true" or "false"; anything else is a 400 that changes nothing (a
// crafted drained=maybe put a drained GPU back in service).
func TestSwitchFormsTakeOnlyTrueOrFalse(t *testing.T) {
	p := newPortal(t)
	admin := p.client()
	p.loginSudo(admin, "admin", adminPassword)
	_, gpus := p.api("GET", "/api/v1/gpus", tokenFor(t, p, "admin", "admin"), "")
	uuid := gpus["items"].([]any)[0].(map[string]any)["uuid"].(string)
	if res := p.postForm(admin, "/admin/gpus/"+uuid+"/drain", url.Values{"drained": {"true"}}); res.StatusCode != http.StatusSeeOther {
		t.Fatalf("drain: %d", res.StatusCode)
	}
	res, body := p.postFormBody(admin, "/admin/gpus/"+uuid+"/drain", url.Values{"drained": {"maybe"}})
	if res.StatusCode != http.StatusBadRequest || !strings.Contains(body, "drained: must be true or false") {
		t.Errorf("drained=maybe: %d, want 400 naming the field", res.StatusCode)
	}
	states, err := p.srv.Store.GPUStates(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	if !states[uuid].Drained {
		t.Error("drained=maybe put the GPU back in service")
	}
	tokenFor(t, p, "bob", "user")
	bob, _ := p.srv.Store.UserByUsername(context.Background(), "bob")
	if res := p.postForm(admin, "/admin/users/"+itoa(bob.ID)+"/disable", url.Values{"disabled": {"yes"}}); res.StatusCode != http.StatusBadRequest {
		t.Errorf("disabled=yes: %d, want 400", res.StatusCode)
	}
}
