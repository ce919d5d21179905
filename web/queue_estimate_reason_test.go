package web_test

import (
	"context"
	"net/http"
	"strings"
	"testing"
	"time"

	"workbench/models"
	"workbench/web"
)

// TestQueueEstimateSaysWhyItIsUnknown: a queued launch whose GPUs are all
// held by a workbench with no maximum runtime has no estimated start, and
// says why, in its JSON (estimated_start stays null; the reason is a field
// of its own), in the queue's JSON and on its page in the reader's
// language. It read a bare "unknown" a researcher could not plan around,
// then "no estimate: the workbenches …" after "Estimated start:", two
// colons; now "unknown — …", and the JSON names the reason by a code too
// (estimated_start_reason_code), for programs.
func TestQueueEstimateSaysWhyItIsUnknown(t *testing.T) {
	p := newPortal(t, func(c *web.Config) {
		c.Workbenches.DrainEvery, c.Workbenches.ReconcileEvery = time.Hour, time.Hour
	})
	ctx := context.Background()
	adminTok := tokenFor(t, p, "admin", "admin")
	_, gpus := p.api("GET", "/api/v1/gpus", adminTok, "")
	var all []string
	for _, g := range gpus["items"].([]any) {
		all = append(all, g.(map[string]any)["uuid"].(string))
	}
	fl, err := p.srv.Store.FlavorByNameOrID(ctx, "1x H100 80GB HBM3")
	if err != nil {
		t.Fatal(err)
	}
	admin, _ := p.srv.Store.UserByUsername(ctx, "admin")
	p.runningRecord(admin, "everything", models.GPUNeed{Model: fl.GPUModel, Count: len(all), Candidates: all})

	alice := tokenFor(t, p, "alice", "user")
	code, wb := p.api("POST", "/api/v1/workbenches", alice, `{"name":"waits","image":"PyTorch (CUDA 12)","flavor":"1x H100 80GB HBM3","queue":true}`)
	if code != http.StatusAccepted || wb["state"] != "queued" {
		t.Fatalf("launch on a full pool: %d %v", code, wb)
	}
	const why, whyCode = "the workbenches holding these GPUs have no maximum runtime", "held_without_end"
	_, got := p.api("GET", "/api/v1/workbenches/"+wb["id"].(string), alice, "")
	if at, has := got["estimated_start"]; !has || at != nil || got["estimated_start_reason"] != why || got["estimated_start_reason_code"] != whyCode {
		t.Errorf("workbench JSON: estimated_start %v (present %v), reason %q (%v), want null and %q (%s)", at, has, got["estimated_start_reason"], got["estimated_start_reason_code"], why, whyCode)
	}
	_, q := p.api("GET", "/api/v1/queue", alice, "")
	if items := q["items"].([]any); len(items) != 1 || items[0].(map[string]any)["estimated_start_reason"] != why ||
		items[0].(map[string]any)["estimated_start_reason_code"] != whyCode || items[0].(map[string]any)["estimated_start"] != nil {
		t.Errorf("queue JSON: %v", q)
	}
	zh, en := p.readersSignedIn("alice", "alice-password")
	for _, r := range []struct {
		name string
		want string
	}{{"en", "unknown — " + why}, {"zh", "未知——占用这些 GPU 的工作台没有最长运行时间"}} {
		c := en
		if r.name == "zh" {
			c = zh
		}
		_, body := p.get(c, "/workbenches/"+wb["id"].(string))
		if est := strings.TrimSpace(mpDoc(t, body).Find(`[data-testid=queue-estimate]`).Text()); est != r.want {
			t.Errorf("%s page: estimated start %q, want %q", r.name, est, r.want)
		}
	}
}
