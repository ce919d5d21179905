package proxy

import (
	"net/url"
	"path"
	"strings"
	"testing"
)

// FuzzParsePath: whatever path a client sends, a request the proxy lets
// through names a valid id, and both what the portal checked (the decoded
// path) and what Jupyter routes on (the escaped path) stay under /wb/{id}/.
func FuzzParsePath(f *testing.F) {
	for _, s := range []string{"/wb/abc/", "/wb/abc", "/wb/abc/lab?x=1", "/wb/abc/../def/", "/wb/abc/%2e%2e/def/",
		"/wb/a%2Fb/", "/wb/ABC/", "/wb//x/", "/wb/abc/./x", "/wb/abc/..", "/wb/abc%2F..%2Fdef/", "/wb/abc/%2F%2E%2E/x",
		"/wb/abc\\..\\def/", "/wb/abc/;/../../def/", "/wb/" + strings.Repeat("a", 65) + "/"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, raw string) {
		u, err := url.ParseRequestURI(raw)
		if err != nil {
			return
		}
		id, res := parsePath(u)
		switch res {
		case pathNotFound:
			return
		case pathRedirect:
			if u.EscapedPath() != "/wb/"+id || u.Path != "/wb/"+id {
				t.Fatalf("%q: redirect for a path that is not exactly /wb/%s", raw, id)
			}
		case pathOK:
			base := "/wb/" + id
			if !validID(id) {
				t.Fatalf("%q: invalid id %q let through", raw, id)
			}
			if !strings.HasPrefix(u.EscapedPath(), base+"/") {
				t.Fatalf("%q: escaped path %q leaves %s/", raw, u.EscapedPath(), base)
			}
			if c := path.Clean(u.Path); c != base && !strings.HasPrefix(c, base+"/") {
				t.Fatalf("%q: cleaned path %q leaves %s/", raw, c, base)
			}
			if dec, err := url.PathUnescape(u.EscapedPath()); err == nil {
				if c := path.Clean(dec); c != base && !strings.HasPrefix(c, base+"/") {
					t.Fatalf("%q: decoded escaped path %q leaves %s/", raw, c, base)
				}
			}
		}
	})
}
