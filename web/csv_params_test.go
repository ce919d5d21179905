package web_test

import (
	"net/http"
	"strings"
	"testing"
)

// One rule for stray query parameters: CSV downloads (scripts fetch them)
// refuse a parameter they do not read, /calculator.csv as /usage.csv
// does (it answered 200 and ignored it); HTML pages ignore one, as web
// pages do. The page's own CSV link, every parameter it carries, works.
func TestCSVDownloadsRefuseStrayParametersPagesDoNot(t *testing.T) {
	p := calcPortal(t)
	c := p.client()
	p.login(c, "admin", adminPassword)
	tok := tokenFor(t, p, "bob", "user")
	for _, path := range []string{"/calculator.csv?foo=1", "/calculator.csv?flavor=x&flavor=y", "/usage.csv?foo=1"} {
		code, out := p.api("GET", path, tok, "")
		if code != http.StatusBadRequest || (!strings.Contains(path, "&") && errCode(out) != "unknown_parameter") {
			t.Errorf("GET %s: %d %v, want 400 naming the parameter", path, code, out)
		}
	}
	for _, path := range []string{"/calculator?foo=1", "/usage?foo=1", "/gpus?foo=1"} {
		if res, _ := p.get(c, path); res.StatusCode != http.StatusOK {
			t.Errorf("page %s: %d, want 200 (pages ignore what they do not read)", path, res.StatusCode)
		}
	}
	_, body := p.get(c, "/calculator?flavor=custom&cpu_cores=4&total_hours=10")
	href, ok := parseHTML(t, body).Find(tid("csv-link")).Attr("href")
	if !ok || !strings.HasPrefix(href, "/calculator.csv?") {
		t.Fatalf("the page's CSV link: %q", href)
	}
	if res, out := p.get(c, href); res.StatusCode != http.StatusOK {
		t.Errorf("the page's own CSV link %s: %d %.300s", href, res.StatusCode, out)
	}
}
