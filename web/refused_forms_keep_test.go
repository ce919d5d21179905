package web_test

import (
	"context"
	"net/http"
	"net/url"
	"strings"
	"testing"

	"github.com/PuerkitoBio/goquery"
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

// TestSameTimeRatesShowWhichApplies: two GPU rates scheduled for the same
// time: the one entered last applies; the other reads "superseded" in the
// price history (both read "scheduled").
func TestSameTimeRatesShowWhichApplies(t *testing.T) {
	p := newPortal(t)
	admin := tokenFor(t, p, "admin", "admin")
	const h100 = "NVIDIA H100 80GB HBM3"
	for _, micros := range []string{"3500000", "3100000"} {
		if code, out := p.api("PUT", "/api/v1/admin/prices", admin, `{"rates":[{"resource":"gpu","gpu_model":"`+h100+`","rate_micros":`+micros+`,"effective_from":"2030-01-01T00:00:00Z"}]}`); code != 200 {
			t.Fatalf("schedule %s: %d %v", micros, code, out)
		}
	}
	c := p.client()
	p.login(c, "admin", adminPassword)
	_, body := p.get(c, "/admin/prices")
	badges := map[string]string{}
	mpDoc(t, body).Find(`[data-testid=price-history-row][data-resource=gpu]`).Each(func(_ int, s *goquery.Selection) {
		micros, _ := s.Attr("data-rate-micros")
		if micros == "3500000" || micros == "3100000" {
			badges[micros] = strings.Join(strings.Fields(s.Find(`.badge`).Text()), " ")
		}
	})
	if badges["3100000"] != "scheduled" || badges["3500000"] != "superseded" {
		t.Errorf("badges %v; want 3.10 (entered last) scheduled, 3.50 superseded", badges)
	}
}
