package web_test

import (
	"context"
	"net/http"
	"net/url"
	"strings"
	"testing"

	"workbench/models"
)

// A refused start reads as one sentence after "Could not start:", in
// English and Chinese: the flash stacked two colons ("Could not start:
// quota exceeded: the monthly budget is used up"; "无法启动：超出配额：本月
// 预算已用完"). The refusal's own colon reads as a dash, as after "Not
// booked:" (TestBookingRefusalsReadAsOneSentence), and the API keeps the
// models' message.
func TestStartRefusalFlashReadsAsOneSentence(t *testing.T) {
	p := newPortal(t)
	ctx := context.Background()
	lin, err := p.srv.Store.CreateUser(ctx, models.NewUser{Username: "lin", Password: "lin-password-1", Role: models.RoleUser})
	if err != nil {
		t.Fatal(err)
	}
	zero := int64(0)
	if err := p.srv.Store.SetQuota(ctx, models.ScopeUser, lin.ID, models.Limits{BudgetPerMonthMicros: &zero}, "admin"); err != nil {
		t.Fatal(err)
	}
	// A stopped workbench of lin's: the refusal comes before the engine.
	wb := &models.Workbench{Name: "w1", OwnerID: lin.ID, ImageID: 1, FlavorID: 1}
	if err := p.srv.Store.CreateWorkbench(ctx, wb, models.GPUNeed{}, nil); err != nil {
		t.Fatal(err)
	}
	if err := p.srv.Store.SetWorkbenchState(ctx, wb.ID, models.StateStopped, 0, "", nil); err != nil {
		t.Fatal(err)
	}
	zh, en := p.readersSignedIn("lin", "lin-password-1")
	for c, want := range map[*http.Client]string{
		en: "Could not start: quota exceeded — the monthly budget is used up.",
		zh: "无法启动：超出配额——本月预算已用完。",
	} {
		res := p.postForm(c, "/workbenches/"+wb.ID+"/start", url.Values{})
		if res.StatusCode != http.StatusSeeOther {
			t.Fatalf("start with the budget used up: status %d", res.StatusCode)
		}
		_, body := p.get(c, res.Header.Get("Location"))
		got := strings.Join(strings.Fields(mpDoc(t, body).Find(`[data-testid=flash][data-kind=error]`).Text()), " ")
		if n := strings.Count(got, ":") + strings.Count(got, "："); n != 1 {
			t.Errorf("%q has %d colons, want the one after \"Could not start\"", got, n)
		}
		if got != want {
			t.Errorf("flash:\n got %q\nwant %q", got, want)
		}
	}
	// The API's message is the models' text, as before.
	code, out := p.api("POST", "/api/v1/workbenches/"+wb.ID+"/start", tokenFor(t, p, "lin", "user"), "")
	e, _ := out["error"].(map[string]any)
	if msg, _ := e["message"].(string); code != http.StatusUnprocessableEntity || msg != "quota exceeded: the monthly budget is used up" {
		t.Errorf("API start: %d %v, want 422 with the models' message", code, out)
	}
}
