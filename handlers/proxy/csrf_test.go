package proxy

import (
	"net/http"
	"strings"
	"testing"
)

func TestCSRFUnsafeMethods(t *testing.T) {
	f := newFixture(t, http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {}),
		func(o *Options) { o.TrustedOrigins = []string{"https://portal.example/"} })
	self := f.front.URL
	cases := []struct {
		name   string
		method string
		hdr    map[string]string
		want   int
	}{
		{"cross-origin POST", "POST", map[string]string{"Origin": "https://evil.example"}, 403},
		{"null origin POST", "POST", map[string]string{"Origin": "null"}, 403},
		{"same-origin POST", "POST", map[string]string{"Origin": self}, 200},
		{"trusted origin POST", "POST", map[string]string{"Origin": "https://PORTAL.example"}, 200},
		{"cross-site fetch", "POST", map[string]string{"Sec-Fetch-Site": "cross-site"}, 403},
		{"same-site fetch", "PUT", map[string]string{"Sec-Fetch-Site": "same-site", "Origin": self}, 403},
		{"cross-site beats own Origin", "DELETE", map[string]string{"Sec-Fetch-Site": "cross-site", "Origin": self}, 403},
		{"same-origin fetch", "PATCH", map[string]string{"Sec-Fetch-Site": "same-origin"}, 200},
		{"navigation", "POST", map[string]string{"Sec-Fetch-Site": "none"}, 200},
		{"non-browser client", "POST", nil, 200},
		{"cross-origin GET is safe", "GET", map[string]string{"Origin": "https://evil.example", "Sec-Fetch-Site": "cross-site"}, 200},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			before := f.upHits.Load()
			res, body := f.do(c.method, "/wb/abc/api/contents/x", c.hdr, "{}")
			if res.StatusCode != c.want {
				t.Fatalf("status %d, want %d (%q)", res.StatusCode, c.want, body)
			}
			reached := f.upHits.Load() != before
			if reached != (c.want == 200) {
				t.Errorf("upstream reached = %v", reached)
			}
			if c.want == 403 && !strings.Contains(body, "Cross-origin request refused") {
				t.Errorf("403 body %q", body)
			}
		})
	}
}
