package web_test

import (
	"encoding/json"
	"io"
	"net/http"
	"strings"
	"testing"
)

// A script that fetches a CSV export with a token gets its errors as the
// API's JSON: it got an HTML error page, or a redirect to the login form
// for a bad token.
func TestCSVExportErrorsAreJSONForScripts(t *testing.T) {
	p := newPortal(t)
	tok := tokenFor(t, p, "gus", "user")
	get := func(path, authz string) (int, string, map[string]any) {
		t.Helper()
		req, _ := http.NewRequest("GET", p.ts.URL+path, nil)
		req.Header.Set("Authorization", authz)
		client := &http.Client{CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }}
		res, err := client.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		defer res.Body.Close()
		b, _ := io.ReadAll(res.Body)
		var out map[string]any
		json.Unmarshal(b, &out)
		return res.StatusCode, res.Header.Get("Content-Type"), out
	}
	if code, ct, out := get("/usage.csv?month=never", "Bearer "+tok); code != http.StatusBadRequest || !strings.HasPrefix(ct, "application/json") || errCode(out) == "" {
		t.Errorf("a bad month: %d %s %v; want 400 JSON with a code", code, ct, out)
	}
	if code, ct, out := get("/usage.csv", "Bearer wbt_nonsense"); code != http.StatusUnauthorized || !strings.HasPrefix(ct, "application/json") || errCode(out) != "invalid_token" {
		t.Errorf("a bad token: %d %s %v; want 401 JSON invalid_token", code, ct, out)
	}
	if code, ct, _ := get("/usage.csv", "Bearer "+tok); code != http.StatusOK || !strings.HasPrefix(ct, "text/csv") {
		t.Errorf("the export: %d %s", code, ct)
	}
}
