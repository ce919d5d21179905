package web_test

import (
	"net/http"
	"testing"
)

// Typing /admin (or /admin/) leads an admin to the console's first tab; a
// user and a visitor get what every admin page gives them, not the console.
func TestAdminAddressLeadsToTheConsole(t *testing.T) {
	p := newPortal(t)
	admin, _ := mpAdmin(t, p)

	res, _ := p.get(admin, "/admin")
	if res.StatusCode != http.StatusSeeOther || res.Header.Get("Location") != "/admin/users" {
		t.Fatalf("admin GET /admin: %d to %q, want 303 to /admin/users", res.StatusCode, res.Header.Get("Location"))
	}
	// The trailing slash is gin's redirect to /admin, one hop more.
	res, _ = p.get(admin, "/admin/")
	if loc := res.Header.Get("Location"); res.StatusCode/100 != 3 || loc != "/admin" {
		t.Fatalf("admin GET /admin/: %d to %q, want a redirect to /admin", res.StatusCode, loc)
	}

	tokenFor(t, p, "ada", "user")
	ada := p.client()
	p.login(ada, "ada", "ada-password")
	if res, _ := p.get(ada, "/admin"); res.StatusCode != http.StatusForbidden {
		t.Fatalf("user GET /admin: %d to %q, want 403", res.StatusCode, res.Header.Get("Location"))
	}
	res, _ = p.get(p.client(), "/admin")
	if res.StatusCode != http.StatusSeeOther || res.Header.Get("Location") != "/login?next=%2Fadmin" {
		t.Fatalf("visitor GET /admin: %d to %q, want 303 to /login?next=%%2Fadmin", res.StatusCode, res.Header.Get("Location"))
	}
}
