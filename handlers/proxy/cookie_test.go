package proxy

import (
	"net/http"
	"strings"
	"testing"
)

// FuzzCookieValue: CookieValue finds what r.Cookie finds, for any Cookie
// header lines and name.
func FuzzCookieValue(f *testing.F) {
	for _, seed := range [][3]string{
		{"wbsession=abc", "", "wbsession"},
		{"a=1; wbsession=abc; b=2", "", "wbsession"},
		{"wbsession=\"quoted\"", "", "wbsession"},
		{"wbsession=\"", "", "wbsession"},
		{"wbsession=bad\\value; wbsession=good", "", "wbsession"},
		{"  wbsession = spaced ;x=1", "", "wbsession"},
		{"other=1", "wbsession=second-line", "wbsession"},
		{"wbsession", "", "wbsession"},
		{"wbsession=", "", "wbsession"},
		{"wbsession=a b", "", "wbsession"},
		{"wbsession=\t", "", "wbsession"},
		{"x=1;;;wbsession=v;", "", "wbsession"},
		{"wbsession=v", "", ""},
		{"wb session=v", "", "wb session"},
		{strings.Repeat("a=1;", 3000) + "wbsession=v", "", "wbsession"},
		{strings.Repeat("a=1;", 2998) + "wbsession=v", "", "wbsession"},
	} {
		f.Add(seed[0], seed[1], seed[2])
	}
	f.Fuzz(func(t *testing.T, line1, line2, name string) {
		r := &http.Request{Header: http.Header{}}
		if line1 != "" {
			r.Header.Add("Cookie", line1)
		}
		if line2 != "" {
			r.Header.Add("Cookie", line2)
		}
		got, ok := CookieValue(r, name)
		ck, err := r.Cookie(name)
		switch {
		case (err == nil) != ok:
			t.Fatalf("Cookie(%q) in %q: CookieValue found=%v, r.Cookie err=%v", name, r.Header["Cookie"], ok, err)
		case ok && got != ck.Value:
			t.Fatalf("Cookie(%q) in %q: CookieValue %q, r.Cookie %q", name, r.Header["Cookie"], got, ck.Value)
		}
	})
}
