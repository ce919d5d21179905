package web_test

import (
	"fmt"
	"net/http"
	"strings"
	"testing"

	"workbench/models"
)

// One person may have at most models.MaxQueuedPerUser launches waiting:
// the next is refused (422 quota_exceeded) and nothing is
// left behind; leaving the queue with one makes room again. Another user
// is not held by it. (A user queued 320 launches in 38 s past a limit of
// three running workbenches.)
func TestQueuedLaunchesPerUserAreBounded(t *testing.T) {
	p := newPortal(t)
	p.addImage(fakeCatalogImage("fake", "example.invalid/fake:1"))
	admin := tokenFor(t, p, "admin", "admin")
	eve := tokenFor(t, p, "eve", "user")
	bob := tokenFor(t, p, "bob", "user")
	drainAllGPUs(t, p, admin)
	launch := func(tok, name string) (int, map[string]any) {
		return p.api("POST", "/api/v1/workbenches", tok, fmt.Sprintf(`{"name":%q,"image":"fake","flavor":"1x H100 80GB HBM3","queue":true}`, name))
	}
	var first string
	for i := range models.MaxQueuedPerUser {
		code, out := launch(eve, fmt.Sprintf("q%d", i))
		if code != http.StatusAccepted || out["state"] != "queued" {
			t.Fatalf("queued launch %d: %d %v", i, code, out)
		}
		if i == 0 {
			first = out["id"].(string)
		}
	}
	code, out := launch(eve, "one-too-many")
	if code != http.StatusUnprocessableEntity || errCode(out) != "quota_exceeded" ||
		!strings.Contains(errMessage(out), fmt.Sprintf("you have %d launches waiting in the queue", models.MaxQueuedPerUser)) {
		t.Fatalf("launch %d: %d %v, want 422 quota_exceeded naming the count", models.MaxQueuedPerUser+1, code, out)
	}
	_, list := p.api("GET", "/api/v1/workbenches", eve, "")
	if n := len(list["items"].([]any)); n != models.MaxQueuedPerUser {
		t.Fatalf("eve has %d workbenches after the refusal, want %d (nothing left behind)", n, models.MaxQueuedPerUser)
	}
	if code, out := launch(bob, "bobs"); code != http.StatusAccepted {
		t.Fatalf("another user's queued launch: %d %v", code, out)
	}
	if code, out := p.api("DELETE", "/api/v1/workbenches/"+first, eve, ""); code/100 != 2 {
		t.Fatalf("leave the queue: %d %v", code, out)
	}
	if code, out := launch(eve, "one-too-many"); code != http.StatusAccepted {
		t.Fatalf("after leaving the queue with one: %d %v", code, out)
	}
}

// drainAllGPUs takes every GPU out of service (admin's token), so that a
// launch with queue waits, and returns their UUIDs.
func drainAllGPUs(t *testing.T, p *testPortal, admin string) []string {
	t.Helper()
	_, gpus := p.api("GET", "/api/v1/gpus", admin, "")
	var all []string
	for _, it := range gpus["items"].([]any) {
		uuid := it.(map[string]any)["uuid"].(string)
		all = append(all, uuid)
		if code, out := p.api("PUT", "/api/v1/gpus/"+uuid+"/drain", admin, `{"drained":true}`); code != 200 {
			t.Fatalf("drain: %d %v", code, out)
		}
	}
	return all
}
