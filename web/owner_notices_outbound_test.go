package web_test

import (
	"context"
	"encoding/json"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"
	"time"

	"workbench/models"
	"workbench/web"
)

// On the real engine: a preemptible run told to yield is told to its owner
// by email and by the webhook too (who left it running for the night is
// not on its page), naming the workbench and linking to its page; the
// in-app notification is there with the same text.
func TestPreemptionNoticeReachesTheOwnerByEmailAndWebhook(t *testing.T) {
	sink := newSMTPSink(t)
	var mu sync.Mutex
	var hooks []map[string]any
	wh := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		raw, _ := io.ReadAll(r.Body)
		var b map[string]any
		_ = json.Unmarshal(raw, &b)
		mu.Lock()
		hooks = append(hooks, b)
		mu.Unlock()
		w.WriteHeader(http.StatusNoContent)
	}))
	t.Cleanup(wh.Close)
	p, _ := enginePortal(t, func(c *web.Config) {
		c.SMTPAddr, c.SMTPFrom = sink.ln.Addr().String(), "portal@example.org"
		c.NotifyWebhook = wh.URL
		c.PublicURL = "https://portal.example.org"
		c.Workbenches.DrainEvery = 200 * time.Millisecond
	})
	ctx := context.Background()
	if _, err := p.srv.Store.CreateUser(ctx, models.NewUser{Username: "spot", Email: "spot@example.org", Password: "spot-password", Role: "user"}); err != nil {
		t.Fatal(err)
	}
	spot := tokenFor(t, p, "spot", "user")
	id := preemptOvernight(t, p, spot)
	link := "https://portal.example.org/workbenches/" + id
	deadline := time.Now().Add(2 * time.Minute)
	for len(sink.messages()) == 0 || func() bool { mu.Lock(); defer mu.Unlock(); return len(hooks) == 0 }() {
		if time.Now().After(deadline) {
			t.Fatalf("no mail or webhook two minutes after the preemption: %d mails, %d hooks", len(sink.messages()), len(hooks))
		}
		time.Sleep(20 * time.Millisecond) // poll: the notice goes out after the drain
	}
	m := sink.messages()[0]
	if m.To != "<spot@example.org>" || !strings.Contains(m.Data, "Subject: Workbench: overnight must yield its GPUs") ||
		!strings.Contains(m.Data, "Workbench overnight must yield its GPUs to higher-priority work") || !strings.Contains(m.Data, link) {
		t.Errorf("mail: %+v", m)
	}
	mu.Lock()
	h := hooks[0]
	mu.Unlock()
	if h["event"] != "workbench_preempt" || h["user"] != "spot" || h["workbench"] != "overnight" || h["workbench_id"] != id || h["link"] != link {
		t.Errorf("webhook body %v", h)
	}
	_, notes := p.api("GET", "/api/v1/notifications", spot, "")
	items, _ := notes["items"].([]any)
	if len(items) != 1 || items[0].(map[string]any)["message"] != h["message"] || items[0].(map[string]any)["link"] != "/workbenches/"+id {
		t.Errorf("in-app notifications %v, webhook message %v", notes, h["message"])
	}
	// On the page its link goes to the workbench, named as such (a fired
	// GPU watch's link is "Launch").
	c := p.client()
	p.login(c, "spot", "spot-password")
	_, page := p.get(c, "/notifications")
	a := mpDoc(t, page).Find(`[data-testid=notification] [data-testid=notification-link]`)
	if href, _ := a.Attr("href"); a.Length() != 1 || href != "/workbenches/"+id || strings.TrimSpace(a.Text()) != "View workbench" {
		t.Errorf("notification link %q → %q", a.Text(), href)
	}
}

// preemptOvernight has the user of token run a preemptible workbench
// "overnight" on the only GPU left in the pool, then has eve queue an
// interactive launch that needs it, so that overnight is told to yield;
// it returns overnight's id.
func preemptOvernight(t *testing.T, p *testPortal, token string) string {
	t.Helper()
	ctx := context.Background()
	eve := tokenFor(t, p, "eve", "user")
	// One GPU in the pool: the others drained.
	_, gpus := p.api("GET", "/api/v1/gpus", token, "")
	for _, g := range gpus["items"].([]any)[1:] {
		if err := p.srv.Store.SetGPUDrained(ctx, g.(map[string]any)["uuid"].(string), true, "admin", "test"); err != nil {
			t.Fatal(err)
		}
	}
	code, run := p.api("POST", "/api/v1/workbenches", token, `{"name":"overnight","image":"fake","flavor":"1x H100 80GB HBM3","preemptible":true}`)
	if code != http.StatusAccepted {
		t.Fatalf("preemptible launch: %d %v", code, run)
	}
	id := run["id"].(string)
	waitState(t, p, token, id, "running")
	if code, out := p.api("POST", "/api/v1/workbenches", eve, `{"name":"now","image":"fake","flavor":"1x H100 80GB HBM3","queue":true}`); code != http.StatusAccepted || out["state"] != "queued" {
		t.Fatalf("interactive launch: %d %v", code, out)
	}
	return id
}
