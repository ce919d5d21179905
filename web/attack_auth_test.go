package web_test

// The attack suite (issue 9), the parts about login, redirects, secrets at
// rest and input. Each test replays one finding of the attack on a running
// portal and fails on the code it was found in:
//
//   - login burst:        TestAttackLoginBurst, TestAttackLoginHashSlots,
//     TestAttackLoginAdminClearsLock (attack_login_test.go)
//   - open redirect:      TestAttackOpenRedirectTable (here; the unit table
//     and FuzzSafeNext are in handlers/redirect_test.go)
//   - backup file mode:   TestAttackBackupFileMode (here; the CLI's too in
//     cmd/workbench/main_test.go)
//   - metrics:            TestAttackMetricsNeedAuthByDefault (metrics_test.go)
//   - validation table:   TestAttackValidationTable (attack_validation_test.go)
//   - fuzzers:            FuzzAPIJSONBodies (fuzz_api_test.go),
//     FuzzStartCommand (models), FuzzParsePath (handlers/proxy), FuzzSafeNext
//     (handlers); `make fuzz` runs each for longer.

import (
	"context"
	"net/http"
	"net/url"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestAttackOpenRedirectTable: /login?next=… may only lead to a path on
// the portal. The finding: /login?next=/%09/evil.example/ landed on
// evil.example (browsers drop the tab and read //evil.example).
func TestAttackOpenRedirectTable(t *testing.T) {
	p := newPortal(t)
	for _, tc := range []struct{ next, want string }{
		{"/usage", "/usage"},
		{"/workbenches/new?flavor=CPU+small", "/workbenches/new?flavor=CPU+small"},
		{"/\t/evil.example/", "/"},
		{"//evil.example/", "/"},
		{"/\\evil.example/", "/"},
		{"https://evil.example/", "/"},
		{"/%2F/evil.example/", "/"},
		{"/\n/evil.example/", "/"},
		{"javascript:alert(1)", "/"},
	} {
		// The login form carries next through a POST…
		c := p.client()
		res := p.postForm(c, "/login", url.Values{"username": {"admin"}, "password": {adminPassword}, "next": {tc.next}})
		if res.StatusCode != http.StatusSeeOther || res.Header.Get("Location") != tc.want {
			t.Errorf("POST /login next=%q: %d → %q, want %q", tc.next, res.StatusCode, res.Header.Get("Location"), tc.want)
		}
		// …and a logged-in visit to /login?next= redirects at once.
		res2, _ := p.get(c, "/login?next="+url.QueryEscape(tc.next))
		if res2.StatusCode != http.StatusSeeOther || res2.Header.Get("Location") != tc.want {
			t.Errorf("GET /login?next=%q: %d → %q, want %q", tc.next, res2.StatusCode, res2.Header.Get("Location"), tc.want)
		}
	}
	// The login page does not echo an off-site next into its form either.
	_, body := p.get(p.client(), "/login?next=%2F%09%2Fevil.example%2F")
	doc := parseHTML(t, body)
	if v, _ := doc.Find(`input[name="next"]`).Attr("value"); v != "/" {
		t.Errorf("login form carries next=%q, want /", v)
	}
}

// TestAttackBackupFileMode: a backup holds password hashes and tokens; the
// finding was a 0644 file. Now 0600, in a data directory of 0700.
func TestAttackBackupFileMode(t *testing.T) {
	p := newPortal(t)
	out := filepath.Join(t.TempDir(), "backup.db")
	if err := p.srv.Store.Backup(context.Background(), out); err != nil {
		t.Fatal(err)
	}
	fi, err := os.Stat(out)
	if err != nil {
		t.Fatal(err)
	}
	if fi.Mode().Perm() != 0o600 {
		t.Fatalf("backup mode %v, want 0600", fi.Mode().Perm())
	}
	// The session table in the copy holds no usable session id.
	c := p.client()
	p.login(c, "admin", adminPassword)
	u, _ := url.Parse(p.ts.URL)
	var sid string
	for _, ck := range c.Jar.Cookies(u) {
		if ck.Name == "workbench_session" {
			sid = ck.Value
		}
	}
	out2 := filepath.Join(t.TempDir(), "backup2.db")
	if err := p.srv.Store.Backup(context.Background(), out2); err != nil {
		t.Fatal(err)
	}
	raw, _ := os.ReadFile(out2)
	if sid == "" || strings.Contains(string(raw), sid) {
		t.Fatalf("the backup holds the live session id (or none was found: %q)", sid)
	}
}
