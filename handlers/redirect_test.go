package handlers

import (
	"net/url"
	"strings"
	"testing"
)

// redirectCases is the open-redirect table: every target a browser could
// take off-site must come back as "/".
var redirectCases = []struct {
	next string
	want string
}{
	{"/", "/"},
	{"/usage", "/usage"},
	{"/workbenches/abc-1?tab=logs", "/workbenches/abc-1?tab=logs"},
	{"/wb/abc/lab/tree/a%20b.ipynb", "/wb/abc/lab/tree/a%20b.ipynb"},
	{"", "/"},
	{"usage", "/"},
	{"//evil.example/", "/"},
	{"///evil.example/", "/"},
	{"/\t/evil.example/", "/"}, // the finding: /login?next=/%09/evil.example/
	{"/\n/evil.example/", "/"},
	{"/\r/evil.example/", "/"},
	{"/ /evil.example/", "/"},
	{"\t//evil.example/", "/"},
	{"/\\evil.example/", "/"},
	{"\\\\evil.example/", "/"},
	{"/a\\b", "/"},
	{"https://evil.example/", "/"},
	{"http:/evil.example", "/"},
	{"javascript:alert(1)", "/"},
	{"/%2F/evil.example/", "/"},
	{"/%2f%2fevil.example/", "/"},
	{"/%5Cevil.example/", "/"},
	{"/%09/evil.example/", "/"},
	{"/\x00/evil.example", "/"},
	{"/\x7f", "/"},
	{"/é", "/"},
	{"/\u3000/evil.example", "/"},
	{"/%zz", "/"},
	{"/" + strings.Repeat("a", 3000), "/"},
}

func TestSafeNextTable(t *testing.T) {
	for _, tc := range redirectCases {
		if got := safeNext(tc.next); got != tc.want {
			t.Errorf("safeNext(%q) = %q, want %q", tc.next, got, tc.want)
		}
	}
}

// FuzzSafeNext: whatever comes in, what goes out stays on this origin, also
// after a browser's leniencies (tab/newline removal, "\" as "/").
func FuzzSafeNext(f *testing.F) {
	for _, tc := range redirectCases {
		f.Add(tc.next)
	}
	base, _ := url.Parse("https://portal.example/login")
	f.Fuzz(func(t *testing.T, next string) {
		got := safeNext(next)
		if got != "/" && got != next {
			t.Fatalf("safeNext(%q) = %q: rewrote instead of accepting or refusing", next, got)
		}
		browser := strings.NewReplacer("\t", "", "\n", "", "\r", "", "\\", "/").Replace(got)
		ref, err := url.Parse(browser)
		if err != nil {
			t.Fatalf("safeNext(%q) = %q does not parse: %v", next, got, err)
		}
		if r := base.ResolveReference(ref); r.Host != "portal.example" || r.Scheme != "https" {
			t.Fatalf("safeNext(%q) = %q leaves the origin: %s", next, got, r)
		}
		if !strings.HasPrefix(got, "/") || strings.HasPrefix(got, "//") {
			t.Fatalf("safeNext(%q) = %q is not a single-slash path", next, got)
		}
	})
}
