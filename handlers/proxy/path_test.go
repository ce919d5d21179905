package proxy

import (
	"net/url"
	"path"
	"strings"
	"testing"
)

func TestParsePath(t *testing.T) {
	cases := []struct {
		in     string
		id     string
		result pathResult
	}{
		{"/wb/abc/", "abc", pathOK},
		{"/wb/abc/lab/tree/x.ipynb?x=1", "abc", pathOK},
		{"/wb/a-1/api/contents/a%2Fb", "a-1", pathOK},
		{"/wb/abc/x/../lab", "abc", pathOK},
		{"/wb/abc", "abc", pathRedirect},
		{"/wb/abc?x=1", "abc", pathRedirect},
		{"/wb/" + strings.Repeat("z", 64) + "/", strings.Repeat("z", 64), pathOK},
		{"/wb/" + strings.Repeat("z", 65) + "/", "", pathNotFound},
		{"/wb/../x/", "", pathNotFound},
		{"/wb/UPPER/", "", pathNotFound},
		{"/wb/", "", pathNotFound},
		{"/wb", "", pathNotFound},
		{"/wb//", "", pathNotFound},
		{"/wb/a%2Fb/", "", pathNotFound},
		{"/wb/ab%63/", "", pathNotFound},
		{"/wb/ab%63", "", pathNotFound},
		{"/wb/abc/..", "", pathNotFound},
		{"/wb/abc/../", "", pathNotFound},
		{"/wb/abc/../def/", "", pathNotFound},
		{"/wb/abc/%2e%2e/def/", "", pathNotFound},
		{"/x/wb/abc/", "", pathNotFound},
	}
	for _, c := range cases {
		u, err := url.Parse(c.in)
		if err != nil {
			t.Fatal(err)
		}
		id, res := parsePath(u)
		if res != c.result || (res != pathNotFound && id != c.id) {
			t.Errorf("%s: got (%q, %d), want (%q, %d)", c.in, id, res, c.id, c.result)
		}
	}
}

// FuzzProxyPath checks the invariants the proxy's authorisation relies on:
// an accepted path names a valid id, and neither its decoded nor its
// escaped form (what Jupyter routes on) can leave /wb/{id}/.
func FuzzProxyPath(f *testing.F) {
	for _, s := range []string{
		"/wb/abc/", "/wb/abc", "/wb/abc/lab?x=1", "/wb/../x/", "/wb/UPPER/",
		"/wb/a%2Fb/", "/wb/abc/..%2F..%2Fx", "/wb/abc/./../x", "//wb/abc/",
	} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, raw string) {
		u, err := url.ParseRequestURI(raw)
		if err != nil {
			return
		}
		id, res := parsePath(u)
		if res == pathNotFound {
			return
		}
		if !validID(id) {
			t.Fatalf("%q: accepted invalid id %q", raw, id)
		}
		for _, r := range id {
			if !(r >= 'a' && r <= 'z' || r >= '0' && r <= '9' || r == '-') {
				t.Fatalf("%q: id %q has %q", raw, id, r)
			}
		}
		base := "/wb/" + id
		switch res {
		case pathRedirect:
			if u.Path != base || u.EscapedPath() != base {
				t.Fatalf("%q: redirect for non-bare path", raw)
			}
		case pathOK:
			if !strings.HasPrefix(u.Path, base+"/") || !strings.HasPrefix(u.EscapedPath(), base+"/") {
				t.Fatalf("%q: accepted outside %s/", raw, base)
			}
			if c := path.Clean(u.Path); c != base && !strings.HasPrefix(c, base+"/") {
				t.Fatalf("%q: cleans to %q, outside %s/", raw, c, base)
			}
			if c := path.Clean(u.EscapedPath()); c != base && !strings.HasPrefix(c, base+"/") {
				t.Fatalf("%q: escaped form cleans to %q, outside %s/", raw, c, base)
			}
		}
	})
}
