package proxy

import (
	"net/http"
	"net/url"
	"strings"
)

// Workbench-scoped tokens. A Jupyter client outside the browser (VS Code,
// jupyter console, curl) authenticates to /wb/{id}/… with a token made for
// that one workbench, sent as "Authorization: token …" (or "Bearer …") or
// as ?token=, the two ways Jupyter itself accepts. Options.ScopedTokenPrefix
// tells such a token apart from Jupyter's own token, which JupyterLab in
// the browser may echo and which keeps flowing as before.
//
// A request that carries a scoped token is authenticated by it alone (the
// resolver ignores the session cookie), so the CSRF check is not needed for
// it: a forged request cannot borrow an ambient credential. The token is
// stripped before the request goes upstream (the container only ever sees
// its own Jupyter token) and the response is sandboxed
// (Content-Security-Policy: sandbox): a link that makes a victim's browser
// open someone else's notebook with their token could otherwise run that
// notebook's script in the portal's origin.

// ScopedToken returns the scoped token r carries, if any.
func ScopedToken(r *http.Request, prefix string) (string, bool) {
	if prefix == "" {
		return "", false
	}
	if authz := r.Header.Get("Authorization"); authz != "" {
		scheme, tok, _ := strings.Cut(strings.TrimSpace(authz), " ")
		tok = strings.TrimSpace(tok)
		if (strings.EqualFold(scheme, "token") || strings.EqualFold(scheme, "bearer")) && strings.HasPrefix(tok, prefix) {
			return tok, true
		}
	}
	if strings.Contains(r.URL.RawQuery, "token=") {
		for _, v := range r.URL.Query()["token"] {
			if strings.HasPrefix(v, prefix) {
				return v, true
			}
		}
	}
	return "", false
}

// stripScopedQuery removes every token= parameter holding a scoped token
// from the outgoing query and leaves the query untouched otherwise.
func stripScopedQuery(u *url.URL, prefix string) {
	if prefix == "" || !strings.Contains(u.RawQuery, "token=") {
		return
	}
	parts := strings.Split(u.RawQuery, "&")
	kept := parts[:0]
	changed := false
	for _, part := range parts {
		k, v, _ := strings.Cut(part, "=")
		if dk, err := url.QueryUnescape(k); err == nil && dk == "token" {
			if dv, err := url.QueryUnescape(v); err == nil && strings.HasPrefix(dv, prefix) {
				changed = true
				continue
			}
		}
		kept = append(kept, part)
	}
	if changed {
		u.RawQuery = strings.Join(kept, "&")
	}
}

// scopedReferer is the Referer header value v without the scoped tokens in
// its query, and whether that changed it. A page opened with ?token=wbk_…
// names its own address, token included, as the Referer of every request
// it makes (Referrer-Policy same-origin): the container, which must only
// ever see its own Jupyter token, got the scoped one there.
func scopedReferer(v, prefix string) (string, bool) {
	if prefix == "" || !strings.Contains(v, prefix) {
		return v, false
	}
	u, err := url.Parse(v)
	if err != nil {
		return "", true // unreadable and holding a token: drop it
	}
	before := u.RawQuery
	stripScopedQuery(u, prefix)
	if u.RawQuery == before {
		return v, false
	}
	return u.String(), true
}

// loadsAsCode reports whether the browser says r loads script or styles
// into the page that asked (Sec-Fetch-Dest). A token request's response is
// sandboxed, but a sandbox policy does nothing to a file a page loads with
// <script src>: any user could otherwise serve script from the portal's
// origin (their own notebook's files, their own token in the address), and
// one markup injection anywhere in the portal would run it there, past the
// portal's script-src 'self'.
func loadsAsCode(r *http.Request) bool {
	switch r.Header.Get("Sec-Fetch-Dest") {
	case "script", "style", "worker", "sharedworker", "serviceworker", "audioworklet", "paintworklet", "xslt":
		return true
	}
	return false
}
