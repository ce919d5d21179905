package handlers

import (
	"net/http/httptest"
	"testing"
)

// A sudo-guarded form is the portal's own when the browser sent it from a
// portal page as a navigation: by the request's host, or by the public
// URL's where a reverse proxy rewrites Host; never from a notebook page, a
// fetch() or with no Referer.
func TestFromPortalPage(t *testing.T) {
	h := &Handler{cfg: Config{PublicURL: "https://gpu.example.org"}}
	for _, tc := range []struct {
		host, referer, mode string
		want                bool
	}{
		{"gpu.example.org", "https://gpu.example.org/settings/ssh-keys", "navigate", true},
		{"workbench:8080", "https://gpu.example.org/admin/users", "navigate", true},
		{"workbench:8080", "https://gpu.example.org/admin/users", "", true},
		{"gpu.example.org", "https://gpu.example.org/wb/abc/lab", "navigate", false},
		{"gpu.example.org", "https://gpu.example.org/settings/ssh-keys", "cors", false},
		{"gpu.example.org", "", "navigate", false},
		{"gpu.example.org", "https://evil.example/settings", "navigate", false},
	} {
		r := httptest.NewRequest("POST", "http://"+tc.host+"/settings/ssh-keys", nil)
		r.Host = tc.host
		if tc.referer != "" {
			r.Header.Set("Referer", tc.referer)
		}
		if tc.mode != "" {
			r.Header.Set("Sec-Fetch-Mode", tc.mode)
		}
		if got := h.fromPortalPage(r); got != tc.want {
			t.Errorf("host %s, Referer %q, mode %q: %v, want %v", tc.host, tc.referer, tc.mode, got, tc.want)
		}
	}
}
