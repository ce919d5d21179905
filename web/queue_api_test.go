package web_test

import (
	"net/http"
	"strings"
	"testing"
	"time"
)

// The queue through the API: a queued launch's JSON (state, position,
// reason, priority, preemptible), the queue listing, an admin's cancel with
// its reason, bad priority choices refused with a code, priority classes
// and the preemptible tier's discount managed by admins only.
func TestQueueAPI(t *testing.T) {
	p, _ := enginePortal(t)
	admin := tokenFor(t, p, "admin", "admin")
	alice := tokenFor(t, p, "alice", "user")
	_, gpus := p.api("GET", "/api/v1/gpus", admin, "")
	for _, it := range gpus["items"].([]any) {
		uuid := it.(map[string]any)["uuid"].(string)
		if code, out := p.api("PUT", "/api/v1/gpus/"+uuid+"/drain", admin, `{"drained":true}`); code != 200 {
			t.Fatalf("drain: %d %v", code, out)
		}
	}
	// Without queue: refused as before.
	if code, out := p.api("POST", "/api/v1/workbenches", alice, `{"name":"now","image":"fake","flavor":"1x H100 80GB HBM3"}`); code != http.StatusConflict || errCode(out) != "no_capacity" {
		t.Fatalf("launch without queue on an empty pool: %d %v", code, out)
	}
	code, wb := p.api("POST", "/api/v1/workbenches", alice, `{"name":"later","image":"fake","flavor":"1x H100 80GB HBM3","queue":true,"preemptible":true,"auto_resume":true}`)
	if code != http.StatusAccepted || wb["state"] != "queued" || wb["queue_position"] != 1.0 || wb["priority"] != "preemptible" ||
		wb["preemptible"] != true || wb["auto_resume"] != true || len(wb["gpus"].([]any)) != 0 {
		t.Fatalf("queued launch: %d %v", code, wb)
	}
	if r, _ := wb["queue_reason"].(string); !strings.HasPrefix(r, "1 × H100 80GB HBM3 needed; 0 free") {
		t.Fatalf("queue_reason %q", r)
	}
	if _, has := wb["estimated_start"]; !has || wb["estimated_start"] != nil {
		t.Fatalf("estimated_start %v, want null (unknown)", wb["estimated_start"])
	}
	code, q := p.api("GET", "/api/v1/queue", alice, "")
	if items := q["items"].([]any); code != 200 || len(items) != 1 || items[0].(map[string]any)["name"] != "later" {
		t.Fatalf("queue: %d %v", code, q)
	}
	// The queue's entry says it as the workbench does: times, null when
	// unknown (it was the page's text, "unknown", in the reader's language).
	entry := q["items"].([]any)[0].(map[string]any)
	if at, has := entry["estimated_start"]; !has || at != nil {
		t.Errorf("queue entry estimated_start %v (present %v), want null", at, has)
	}
	if queued, _ := entry["queued_at"].(string); queued == "" {
		t.Errorf("queue entry queued_at %v, want a time", entry["queued_at"])
	} else if _, err := time.Parse(time.RFC3339Nano, queued); err != nil {
		t.Errorf("queue entry queued_at %q: %v", queued, err)
	}
	// Bad choices, each with its code and nothing recorded.
	for body, want := range map[string]string{
		`{"name":"x1","image":"fake","flavor":"1x H100 80GB HBM3","queue":true,"priority":"nope"}`:                           "invalid_priority",
		`{"name":"x2","image":"fake","flavor":"1x H100 80GB HBM3","queue":true,"priority":"interactive","preemptible":true}`: "invalid_priority",
	} {
		if code, out := p.api("POST", "/api/v1/workbenches", alice, body); code != http.StatusBadRequest || errCode(out) != want {
			t.Errorf("%s: %d %v, want 400 %s", body, code, out, want)
		}
	}
	// A user may not raise a class; an admin may.
	if code, _ := p.api("PUT", "/api/v1/admin/priority-classes/urgent", alice, `{"rank":500}`); code != http.StatusForbidden {
		t.Fatalf("user PUT class: %d", code)
	}
	if code, out := p.api("PUT", "/api/v1/admin/priority-classes/urgent", admin, `{"rank":500,"description":"deadlines"}`); code != 200 {
		t.Fatalf("admin PUT class: %d %v", code, out)
	}
	if code, out := p.api("POST", "/api/v1/workbenches", alice, `{"name":"x3","image":"fake","flavor":"1x H100 80GB HBM3","queue":true,"priority":"urgent"}`); code != http.StatusBadRequest {
		t.Fatalf("user chose a class above the default: %d %v", code, out)
	}
	// The tier discount: versioned, never in the past.
	if code, out := p.api("POST", "/api/v1/admin/price-tiers", admin, `{"tier":"preemptible","discount_percent":60,"effective_from":"2001-01-01T00:00:00Z"}`); code != http.StatusBadRequest {
		t.Fatalf("tier in the past: %d %v", code, out)
	}
	if code, out := p.api("POST", "/api/v1/admin/price-tiers", admin, `{"tier":"preemptible","discount_percent":60}`); code != http.StatusCreated {
		t.Fatalf("tier: %d %v", code, out)
	}
	// An admin cancels; the owner reads who did.
	id := wb["id"].(string)
	if code, out := p.api("POST", "/api/v1/admin/queue/"+id+"/cancel", admin, ""); code != http.StatusNoContent {
		t.Fatalf("cancel: %d %v", code, out)
	}
	_, got := p.api("GET", "/api/v1/workbenches/"+id, alice, "")
	if got["state"] != "stopped" || !strings.Contains(got["reason"].(string), "removed from the queue by an administrator (admin)") || got["queue_position"] != 0.0 {
		t.Fatalf("after cancel: %v", got)
	}
	if code, out := p.api("POST", "/api/v1/admin/queue/"+id+"/cancel", admin, ""); code != http.StatusConflict || errCode(out) != "not_queued" {
		t.Fatalf("second cancel: %d %v", code, out)
	}
}

// POST /admin/price-tiers takes only what a caller sets: the stored row's
// own fields (created_by, id) are refused by name, not silently replaced.
func TestPriceTierBodyRefusesStoredFields(t *testing.T) {
	p := newPortal(t)
	admin := tokenFor(t, p, "admin", "admin")
	for _, body := range []string{
		`{"tier":"preemptible","discount_percent":60,"created_by":"mallory"}`,
		`{"tier":"preemptible","discount_percent":60,"id":7}`,
		`{"tier":"preemptible","discount_percent":60,"is_default":true}`,
	} {
		if code, out := p.api("POST", "/api/v1/admin/price-tiers", admin, body); code != http.StatusBadRequest || errCode(out) != "unknown_field" {
			t.Errorf("%s: %d %v, want 400 unknown_field", body, code, out)
		}
	}
	code, first := p.api("POST", "/api/v1/admin/price-tiers", admin, `{"tier":"preemptible","discount_percent":60}`)
	if code != http.StatusCreated || first["created_by"] != "admin" {
		t.Fatalf("a plain tier: %d %v", code, first)
	}
	// Sent again (a retry after a lost answer): nothing added, the version
	// in force answered.
	history := func() int {
		_, h := p.api("GET", "/api/v1/admin/price-tiers", admin, "")
		return len(h["items"].([]any))
	}
	before := history()
	if code, again := p.api("POST", "/api/v1/admin/price-tiers", admin, `{"tier":"preemptible","discount_percent":60}`); code != http.StatusOK || again["id"] != first["id"] {
		t.Fatalf("the same tier again: %d %v, want 200 with version %v", code, again, first["id"])
	}
	if n := history(); n != before {
		t.Errorf("tier versions %d → %d after a repeated POST", before, n)
	}
}
