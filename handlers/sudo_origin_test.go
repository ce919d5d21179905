package handlers

import (
	"net/http/httptest"
	"strings"
	"testing"
)

// A sudo-guarded form is the portal's own when the browser sent it from a
// portal page as a navigation: by the request's host, or by the public
// URL's where a reverse proxy rewrites Host; never from a notebook page, a
// fetch() or with no Referer.
func TestFromPortalPage(t *testing.T) {
	h := &Handler{cfg: Config{PublicURL: "https://gpu.example.org"}}
	// A click on a portal page's submit button: a top-level navigation by
	// the person.
	const clicked = "navigate document ?1"
	for _, tc := range []struct {
		host, referer, fetch string // fetch: Sec-Fetch-Mode, -Dest and -User
		want                 bool
	}{
		{"gpu.example.org", "https://gpu.example.org/settings/ssh-keys", clicked, true},
		{"workbench:8080", "https://gpu.example.org/admin/users", clicked, true},
		{"workbench:8080", "https://gpu.example.org/admin/users", "", true},
		{"gpu.example.org", "https://gpu.example.org/wb/abc/lab", clicked, false},
		{"gpu.example.org", "https://gpu.example.org/settings/ssh-keys", "cors empty -", false},
		{"gpu.example.org", "", clicked, false},
		{"gpu.example.org", "https://evil.example/settings", clicked, false},
		// A notebook's script that rewrote its address to a portal page
		// (history.replaceState) and submits a form: into a hidden iframe,
		// or by itself without the person's click.
		{"gpu.example.org", "https://gpu.example.org/admin/users", "navigate iframe ?1", false},
		{"gpu.example.org", "https://gpu.example.org/admin/users", "navigate iframe -", false},
		{"gpu.example.org", "https://gpu.example.org/admin/users", "navigate document -", false},
	} {
		r := httptest.NewRequest("POST", "http://"+tc.host+"/settings/ssh-keys", nil)
		r.Host = tc.host
		if tc.referer != "" {
			r.Header.Set("Referer", tc.referer)
		}
		if f := strings.Fields(tc.fetch); len(f) == 3 {
			r.Header.Set("Sec-Fetch-Mode", f[0])
			r.Header.Set("Sec-Fetch-Dest", f[1])
			if f[2] != "-" {
				r.Header.Set("Sec-Fetch-User", f[2])
			}
		}
		if got := h.fromPortalPage(r); got != tc.want {
			t.Errorf("host %s, Referer %q, fetch metadata %q: %v, want %v", tc.host, tc.referer, tc.fetch, got, tc.want)
		}
	}
}
