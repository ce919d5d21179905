package web_test

import (
	"net/http"
	"net/url"
	"strings"
	"testing"
)

// The add-user form says what is wrong beside the field: a role that is
// neither admin nor user answered a bare 400 (the form had no place for
// its message), and a 5,000-character email was stored and pushed the
// user list's buttons off the page.
func TestAdminUserFormNamesTheBadField(t *testing.T) {
	p := newPortal(t)
	c := p.client()
	p.loginSudo(c, "admin", adminPassword)
	for _, tc := range []struct {
		field string
		form  url.Values
	}{
		{"role", url.Values{"username": {"eve"}, "role": {"superuser"}, "password": {"eve-password-1"}}},
		{"email", url.Values{"username": {"eve"}, "role": {"user"}, "email": {strings.Repeat("a", 300) + "@b.example"}, "password": {"eve-password-1"}}},
	} {
		res, body := p.postFormBody(c, "/admin/users", tc.form)
		doc := parseHTML(t, body)
		if res.StatusCode != http.StatusBadRequest || strings.TrimSpace(doc.Find("[data-testid=error-"+tc.field+"]").Text()) == "" {
			t.Errorf("bad %s: %d, error shown %q; want 400 with the message beside the field", tc.field, res.StatusCode, doc.Find("[data-testid=error-"+tc.field+"]").Text())
		}
		if v, _ := doc.Find(`input[name=username]`).Attr("value"); v != "eve" {
			t.Errorf("bad %s: the username typed is lost (%q)", tc.field, v)
		}
	}
}
