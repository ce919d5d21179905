package web_test

import (
	"net/http"
	"strings"
	"testing"
)

// /usage windows are on the hour: the ledger splits lines at each hour
// and counts a line by when it starts, so a window inside an hour counted
// whole lines that began in it (221 GPU-seconds in 60 s). With to alone,
// from is the start of to's month (it was this month's, and a past to
// read "must be after from").
func TestAPIUsageWindowIsOnTheHour(t *testing.T) {
	p := newPortal(t)
	alice := tokenFor(t, p, "alice", "user")
	for _, q := range []string{"from=2026-12-05T19:42:00Z&to=2026-12-05T20:00:00Z", "from=2026-12-05T19:00:00Z&to=2026-12-05T19:43:00Z",
		"from=2026-12-05T19:00:00%2B05:30&to=2026-12-06"} {
		code, out := p.api("GET", "/api/v1/usage?"+q, alice, "")
		e, _ := out["error"].(map[string]any)
		msg, _ := e["message"].(string)
		if code != http.StatusBadRequest || !strings.Contains(msg, "must be on the hour") {
			t.Errorf("%s: %d %v; want 400 naming the hour", q, code, out)
		}
	}
	if code, out := p.api("GET", "/api/v1/usage?from=2026-12-05T19:00:00Z&to=2026-12-05T20:00:00Z", alice, ""); code != 200 {
		t.Errorf("an hour's window: %d %v", code, out)
	}
	code, out := p.api("GET", "/api/v1/usage?to=2026-11-15", alice, "")
	if code != 200 || out["from"] != "2026-11-01T00:00:00Z" || out["to"] != "2026-11-15T00:00:00Z" {
		t.Errorf("to alone: %d %v; want from the start of November", code, out)
	}
}
