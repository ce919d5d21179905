package web_test

import (
	"fmt"
	"testing"
	"time"
)

// Prices take effect now or later, never earlier (SPEC §6 rule 12): the
// audit back-dated a GPU price by 55 s and the ledger charged time before
// the price existed. Any past instant is refused with 400 and nothing is
// stored; now and later are accepted.
func TestBackDatedPriceRefused(t *testing.T) {
	p := newPortal(t)
	admin := tokenFor(t, p, "admin", "admin")
	put := func(at time.Time) (int, map[string]any) {
		return p.api("PUT", "/api/v1/admin/prices", admin,
			fmt.Sprintf(`{"rates":[{"resource":"cpu","rate_micros":31000,"effective_from":%q}]}`, at.UTC().Format(time.RFC3339Nano)))
	}
	for _, ago := range []time.Duration{55 * time.Second, 2 * time.Second, 5 * time.Millisecond, 24 * time.Hour} {
		code, body := put(time.Now().Add(-ago))
		if code != 400 {
			t.Fatalf("a price back-dated by %s: %d %v; want 400", ago, code, body)
		}
		if e, _ := body["error"].(map[string]any); e == nil || e["message"] == "" {
			t.Fatalf("no error message: %v", body)
		}
	}
	_, list := p.api("GET", "/api/v1/admin/prices", admin, "")
	for _, h := range list["history"].([]any) {
		if r := h.(map[string]any); r["rate_micros"] == float64(31000) {
			t.Fatalf("a refused price was stored: %v", r)
		}
	}
	// Empty means now; an instant a little ahead is fine.
	if code, body := p.api("PUT", "/api/v1/admin/prices", admin, `{"rates":[{"resource":"cpu","rate_micros":31000}]}`); code != 200 {
		t.Fatalf("a price effective now: %d %v", code, body)
	}
	if code, body := put(time.Now().Add(3 * time.Second)); code != 200 {
		t.Fatalf("a price 3 s ahead: %d %v", code, body)
	}
	// This very second written to the second (a script's "…:05Z" at
	// :05.3) means now: refused before as in the past while the message
	// named the same second. Stored from now, never earlier.
	asked := time.Now()
	code, body := p.api("PUT", "/api/v1/admin/prices", admin,
		fmt.Sprintf(`{"rates":[{"resource":"cpu","rate_micros":32000,"effective_from":%q}]}`, asked.Truncate(time.Second).UTC().Format(time.RFC3339)))
	added, _ := body["added"].([]any)
	if code != 200 || len(added) != 1 {
		t.Fatalf("a price from this second: %d %v", code, body)
	}
	if from, _ := time.Parse(time.RFC3339Nano, added[0].(map[string]any)["effective_from"].(string)); from.Before(asked) {
		t.Errorf("stored from %s, before it was asked at %s", from, asked)
	}
}
