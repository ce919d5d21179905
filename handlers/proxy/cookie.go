package proxy

import (
	"net/http"
	"net/textproto"
	"strings"
)

// CookieValue is r.Cookie(name)'s value, found without parsing every
// cookie into a *http.Cookie: the resolvers look the session cookie up on
// every proxied request, and r.Cookie's allocations were a visible part
// of that (issue 15 §5). It accepts and refuses exactly what r.Cookie
// does (FuzzCookieValue compares them).
func CookieValue(r *http.Request, name string) (string, bool) {
	lines := r.Header["Cookie"]
	if len(lines) == 0 || !isToken(name) {
		return "", false // net/http skips cookies whose name is no token
	}
	// net/http ignores every cookie of a request with too many
	// (GODEBUG httpcookiemaxnum, default 3000).
	n := 0
	for _, line := range lines {
		n += strings.Count(line, ";") + 1
	}
	if n > maxCookies {
		return "", false
	}
	for _, line := range lines {
		line = textproto.TrimString(line)
		var part string
		for len(line) > 0 {
			part, line, _ = strings.Cut(line, ";")
			part = textproto.TrimString(part)
			k, v, _ := strings.Cut(part, "=")
			if textproto.TrimString(k) != name {
				continue
			}
			if len(v) > 1 && v[0] == '"' && v[len(v)-1] == '"' {
				v = v[1 : len(v)-1]
			}
			if validCookieValue(v) {
				return v, true
			}
		}
	}
	return "", false
}

// isToken reports whether s is an RFC 7230 token, as a cookie name must be.
func isToken(s string) bool {
	if s == "" {
		return false
	}
	for i := 0; i < len(s); i++ {
		c := s[i]
		if !('a' <= c && c <= 'z' || 'A' <= c && c <= 'Z' || '0' <= c && c <= '9' || strings.IndexByte("!#$%&'*+-.^_`|~", c) >= 0) {
			return false
		}
	}
	return true
}

// maxCookies is net/http's default httpcookiemaxnum.
const maxCookies = 3000

// validCookieValue is net/http's check of a cookie value's bytes.
func validCookieValue(v string) bool {
	for i := 0; i < len(v); i++ {
		if b := v[i]; b < 0x20 || b >= 0x7f || b == '"' || b == ';' || b == '\\' {
			return false
		}
	}
	return true
}
