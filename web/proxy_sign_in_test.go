package web_test

import (
	"net/http"
	"testing"
)

// TestOpeningAWorkbenchSignedOutAsksToSignIn: a browser opening a
// workbench's address without a session (signed out, expired) is sent to
// sign in and back, whatever the id (it read "There is no such
// workbench", to the owner too); a script (no text/html) still gets 404,
// and a signed-in user opening someone else's or no workbench gets 404.
func TestOpeningAWorkbenchSignedOutAsksToSignIn(t *testing.T) {
	p := newPortal(t)
	c := p.client()
	req, _ := http.NewRequest(http.MethodGet, p.ts.URL+"/wb/abcdefghijklm/lab?reset", nil)
	req.Header.Set("Accept", "text/html,application/xhtml+xml")
	res, err := c.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	res.Body.Close()
	if loc := res.Header.Get("Location"); res.StatusCode != http.StatusSeeOther || loc != "/login?next=%2Fwb%2Fabcdefghijklm%2Flab%3Freset" {
		t.Errorf("signed out, a browser: %d to %q, want 303 to sign in and back", res.StatusCode, loc)
	}
	if res, _ := p.get(c, "/wb/abcdefghijklm/api/status"); res.StatusCode != http.StatusNotFound {
		t.Errorf("signed out, a script: %d, want 404", res.StatusCode)
	}
	tokenFor(t, p, "alice", "user")
	p.login(c, "alice", "alice-password")
	res, err = c.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	res.Body.Close()
	if res.StatusCode != http.StatusNotFound {
		t.Errorf("signed in, no such workbench: %d, want 404", res.StatusCode)
	}
}
