package proxy

import (
	"net/url"
	"path"
	"strings"
)

type pathResult int

const (
	pathOK       pathResult = iota // /wb/{id}/…: proxy it
	pathRedirect                   // exactly /wb/{id}: add the slash
	pathNotFound                   // anything else
)

const maxIDLen = 64

// parsePath extracts the workbench id from /wb/{id}/… and refuses paths
// whose meaning could differ between this check and Jupyter: dot segments
// that climb out of /wb/{id}/ and ids hidden behind escapes (/wb/a%2Fb/).
// Both the decoded and the escaped form must agree on the prefix because
// the escaped form is what Jupyter routes on.
func parsePath(u *url.URL) (string, pathResult) {
	const prefix = "/wb/"
	p := u.Path
	if !strings.HasPrefix(p, prefix) {
		return "", pathNotFound
	}
	id, _, hasSlash := strings.Cut(p[len(prefix):], "/")
	if !validID(id) {
		return "", pathNotFound
	}
	base := prefix + id
	esc := u.EscapedPath()
	if !hasSlash {
		if esc != base {
			return "", pathNotFound
		}
		return id, pathRedirect
	}
	if !strings.HasPrefix(esc, base+"/") {
		return "", pathNotFound
	}
	// Dot segments are legal in URLs; refuse only those that climb out of
	// this workbench.
	if c := path.Clean(p); c != base && !strings.HasPrefix(c, base+"/") {
		return "", pathNotFound
	}
	return id, pathOK
}

// validID reports whether id matches [a-z0-9-]{1,64}.
func validID(id string) bool {
	if len(id) == 0 || len(id) > maxIDLen {
		return false
	}
	for i := 0; i < len(id); i++ {
		c := id[i]
		if !('a' <= c && c <= 'z' || '0' <= c && c <= '9' || c == '-') {
			return false
		}
	}
	return true
}
