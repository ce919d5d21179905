package handlers

import (
	"net/url"
	"strings"
)

// safeNext keeps a post-login redirect on this site: it returns next when it
// is a plain same-origin path (with an optional query) and "/" otherwise.
//
// Browsers are lenient where Go is strict: the WHATWG URL parser drops tabs
// and newlines anywhere (so "/\t/evil.example" becomes "//evil.example", a
// host), treats "\" like "/" and resolves "//host" scheme-relative. So next
// is refused outright when it contains any control character, backslash or
// non-ASCII byte, when it does not start with exactly one "/", or when Go's
// parser sees a scheme, host, user or opaque part. The same checks run on the
// percent-decoded path, because a server in front of the portal might decode
// "/%2F%2Fevil.example" before a browser sees it.
func safeNext(next string) string {
	if sameOriginPath(next) {
		return next
	}
	return "/"
}

// sameOriginPath reports whether s is a redirect target that every browser
// resolves to a path on the current origin.
func sameOriginPath(s string) bool {
	if len(s) == 0 || len(s) > 2048 || !plainPath(s) {
		return false
	}
	u, err := url.Parse(s)
	if err != nil || u.Scheme != "" || u.Host != "" || u.User != nil || u.Opaque != "" {
		return false
	}
	decoded, err := url.PathUnescape(u.EscapedPath())
	return err == nil && !strings.HasPrefix(decoded, "//") && !strings.ContainsFunc(decoded, func(r rune) bool {
		return r < 0x20 || r == 0x7f || r == '\\'
	})
}

// plainPath: starts with one "/", then no second "/" right away, and holds
// only printable ASCII without a backslash.
func plainPath(s string) bool {
	if !strings.HasPrefix(s, "/") || strings.HasPrefix(s, "//") {
		return false
	}
	for i := 0; i < len(s); i++ {
		if c := s[i]; c < 0x21 || c > 0x7e || c == '\\' {
			return false
		}
	}
	return true
}
