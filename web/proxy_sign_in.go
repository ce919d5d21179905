package web

import (
	"net/http"
	"net/url"
)

// proxySignIn answers a browser opening a workbench's address without a
// portal session (never signed in, signed out, expired): the sign-in page,
// which comes back to the address after. It said "There is no such
// workbench" to the owner of an expired session. It is the answer for
// every id, so it tells nothing about which exist.
func proxySignIn(w http.ResponseWriter, r *http.Request) {
	http.Redirect(w, r, "/login?next="+url.QueryEscape(r.URL.RequestURI()), http.StatusSeeOther)
}
