package web_test

import (
	"io"
	"net/http"
	"strings"
	"testing"
)

// A CSV downloaded from a page starts with the UTF-8 byte-order mark, so
// Excel on Chinese Windows reads its group names and reasons as UTF-8; one
// fetched by a script with a token has none (CSV readers keep it as part
// of the first header).
func TestCSVDownloadsCarryABOMForSpreadsheets(t *testing.T) {
	p := newPortal(t)
	tok := tokenFor(t, p, "hua", "user")
	c := p.client()
	p.login(c, "hua", "hua-password")
	res, body := p.get(c, "/usage.csv")
	if res.StatusCode != http.StatusOK || !strings.HasPrefix(body, "\ufeff") {
		t.Errorf("page download: %d, starts %q; want the byte-order mark", res.StatusCode, body[:min(len(body), 8)])
	}
	req, _ := http.NewRequest("GET", p.ts.URL+"/usage.csv", nil)
	req.Header.Set("Authorization", "Bearer "+tok)
	r, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer r.Body.Close()
	b, _ := io.ReadAll(r.Body)
	if r.StatusCode != http.StatusOK || strings.HasPrefix(string(b), "\ufeff") || !strings.HasPrefix(string(b), "id,") && !strings.HasPrefix(string(b), "month,") && len(b) == 0 {
		t.Errorf("script download: %d, starts %q; want no byte-order mark", r.StatusCode, b[:min(len(b), 8)])
	}
}
