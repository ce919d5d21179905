package web_test

// The attack suite (issue 9): the index. Each test replays one finding of
// the attack on a running portal, as a hostile user would try it, and fails
// on the code it was found in. Read top to bottom, file by file:
//
// Cross-user access (what held, kept):
//   - isolation_test.go: TestIsolationBetweenUsers — on the real engine the
//     proxy serves a workbench to its owner only (HTTP and WebSocket),
//     refuses cross-origin writes and upgrades, never forwards the session
//     cookie; the container is hardened and cannot reach another's.
//   - auth_test.go: TestCrossOriginPostRefused; handlers/proxy/ws_test.go:
//     TestWebSocketCrossOriginRefused; handlers/proxy/csrf_test.go:
//     TestCSRFUnsafeMethods — cross-site writes and upgrades refused.
//
// Path mode (notebook script in the portal's own origin):
//   - attack_origin_test.go: admin changes and token creation through a
//     session need a password from the last 10 minutes
//     (TestSudoRequiredForAdminMutationsViaSession, TestSudoExpiresAfterTenMinutes,
//     TestEveryAdminMutationNeedsSudo over every unsafe admin route);
//     requests the browser says come from a /wb/ page are refused
//     (TestRequestsFromNotebookPagesRefused); logout sends Clear-Site-Data
//     (TestLogoutClearsSiteStorage); admin pages say what path mode shares
//     (TestAdminPagesExplainPathMode); TestTokenRevokeIsImmediateAndAudited.
//   - attack_pathmode_browser_test.go: TestBrowserPathModeNotebookCannotTakeTheOrigin
//     — in Chromium, notebook script cannot register a service worker for
//     "/", cannot replace the session cookie through a WebSocket
//     handshake, its API requests are refused, and logout clears service
//     workers.
//   - route_lists_test.go: TestRouteListsAreComplete — the sudo table and
//     the fuzzed endpoints are checked against the route table, so a new
//     route cannot slip past either.
//
// Proxy headers (handlers/proxy):
//   - headers_attack_test.go: TestUpgradeResponseHeadersStripped (Set-Cookie
//     on a 101 cannot replace the session), TestInformationalResponseHeadersStripped
//     (1xx); proxy_test.go: TestResponseHeaders (Service-Worker-Allowed and
//     Set-Cookie stripped), TestStripsPortalCookieKeepsOthers.
//
// Notebook domain (strong isolation, WORKBENCH_NOTEBOOK_DOMAIN):
//   - notebook_domain_test.go: TestNotebookDomainCodeExchange (one-time code
//     bound to user and workbench, another user's code refused, logout ends
//     it), TestNotebookDomainHostPrefixedCookie, TestNotebookDomainConfig.
//   - notebook_domain_browser_test.go: TestBrowserNotebookDomain — the flow in
//     Chromium on *.localhost, the portal cookie never reaching the notebook
//     host; notebook_domain_real_test.go: TestBrowserRealJupyterOnNotebookDomain.
//
// Login burst (attack_login_test.go, attack_login_browser_test.go):
//   - TestAttackLoginBurst (memory and 429s, /healthz answers, the right
//     password still works), TestAttackLoginHashSlots,
//     TestAttackLoginAdminClearsLock, TestBrowserAdminClearsLoginLock.
//
// Revocation (revocation_test.go):
//   - TestRevocationEndsSessionsTokensAndLiveWebSockets — logout, password
//     reset, disable and token revoke end sessions, tokens and a live
//     WebSocket; disabling stops the user's workbenches.
//
// Egress from containers (egress_test.go, egress_browser_test.go):
//   - TestEgressPolicyThroughPortal — from inside a real container: host
//     port, 169.254.169.254 and another workbench refused, an allowed CIDR
//     reachable; TestEgressLaunchWhenRulesFail; TestBrowserAdminSetsEgressPolicy.
//
// Open redirect: TestAttackOpenRedirectTable (here; the unit table
// TestSafeNextTable and FuzzSafeNext are in handlers/redirect_test.go).
//
// Secrets at rest: TestAttackBackupFileMode (here; the CLI's backup mode
// in cmd/workbench/main_test.go, TestUserAddAndTokenCreateWhileServing).
//
// Metrics (metrics_test.go): TestAttackMetricsNeedAuthByDefault,
// TestMetricsBearerToken, TestMetricsSeparateAddress.
//
// Validation (attack_validation_test.go): TestAttackValidationTable — each
// nonsense input gets a 400 naming the field and changes nothing; 413 and
// 405 too.
//
// Fuzzers (seed corpora run by `make test`, `make fuzz` explores each):
//   - FuzzAPIJSONBodies (fuzz_api_test.go) over every JSON endpoint, with
//     TestFuzzAPISeedsAreAccepted keeping its seeds valid;
//   - FuzzStartCommand (models/start_command_fuzz_test.go): {token} stays
//     its own argument, no shell metacharacter the admin did not write;
//   - FuzzParsePath, FuzzProxyPath (handlers/proxy): proxy paths;
//   - FuzzSafeNext (handlers/redirect_test.go): redirect targets;
//   - FuzzParseCalculatorInput (models/pricing): calculator input.

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
