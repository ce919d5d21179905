package web_test

import (
	"net/http"
	"strconv"
	"strings"
	"testing"

	"github.com/PuerkitoBio/goquery"

	"workbench/models"
)

// A whole-number limit past the console's bound names the bound, as the
// other fields' messages do: "is too large" alone left the admin guessing
// how large is allowed. A number too long for the machine gets the same.
func TestQuotaConsoleTooLargeNamesTheBound(t *testing.T) {
	p := newPortal(t)
	adminC, adminTok := mpAdmin(t, p)
	if code, out := p.api("POST", "/api/v1/admin/groups", adminTok, `{"name":"nlp"}`); code != http.StatusCreated {
		t.Fatalf("create group: %d %v", code, out)
	}
	bound := strconv.FormatInt(models.MaxQuotaNumber, 10)
	want := "is too large (at most 1,000,000,000; leave empty to inherit)"
	if strings.ReplaceAll("1,000,000,000", ",", "") != bound {
		t.Fatalf("the message names 1,000,000,000; the bound is %s", bound)
	}
	for _, typed := range []string{"1000000001", "99999999999999999999"} {
		form := mpQuotaForm(typed, "50")
		res, body := p.postFormBody(adminC, "/admin/quotas/groups/nlp", form)
		if res.StatusCode != http.StatusBadRequest {
			t.Fatalf("max_gpus %s: %d, want 400", typed, res.StatusCode)
		}
		got := strings.Join(strings.Fields(mpDoc(t, body).Find(`[data-testid="error-max_gpus"]`).Text()), " ")
		if !strings.Contains(got, want) {
			t.Errorf("max_gpus %s: the field says %q, want %q", typed, got, want)
		}
		kept := false
		mpDoc(t, body).Find(`input[name=max_gpus]`).Each(func(_ int, in *goquery.Selection) {
			kept = kept || in.AttrOr("value", "") == typed
		})
		if !kept {
			t.Errorf("max_gpus %s: the form did not keep what was typed", typed)
		}
	}
}
