package web_test

import (
	"context"
	"crypto/ed25519"
	"crypto/rand"
	"encoding/json"
	"net/http"
	"net/url"
	"strings"
	"testing"
	"time"

	"golang.org/x/crypto/ssh"

	"workbench/models"
	"workbench/web"
)

// newAuthorizedKey returns a fresh ed25519 public key line and its fingerprint.
func newAuthorizedKey(t *testing.T, comment string) (string, string) {
	t.Helper()
	pub, _, err := ed25519.GenerateKey(rand.Reader)
	if err != nil {
		t.Fatal(err)
	}
	pk, err := ssh.NewPublicKey(pub)
	if err != nil {
		t.Fatal(err)
	}
	return strings.TrimSpace(string(ssh.MarshalAuthorizedKey(pk))) + " " + comment, ssh.FingerprintSHA256(pk)
}

// newSSHSigner returns a fresh ed25519 key: its signer (the private key)
// and its public key line.
func newSSHSigner(t *testing.T, comment string) (ssh.Signer, string) {
	t.Helper()
	_, priv, err := ed25519.GenerateKey(rand.Reader)
	if err != nil {
		t.Fatal(err)
	}
	signer, err := ssh.NewSignerFromKey(priv)
	if err != nil {
		t.Fatal(err)
	}
	return signer, strings.TrimSpace(string(ssh.MarshalAuthorizedKey(signer.PublicKey()))) + " " + comment
}

func jsonBody(v any) string { b, _ := json.Marshal(v); return string(b) }

func TestSSHKeysAPI(t *testing.T) {
	p := newPortal(t)
	port := p.serveSSH()
	alice := tokenFor(t, p, "alice", "user")
	bob := tokenFor(t, p, "bob", "user")
	signer, key := newSSHSigner(t, "alice@laptop")
	fp := ssh.FingerprintSHA256(signer.PublicKey())

	for _, tc := range []struct {
		body, code string
	}{
		{jsonBody(map[string]string{"name": "laptop", "public_key": "ssh-ed25519 notbase64"}), "invalid_public_key"},
		{jsonBody(map[string]string{"name": "laptop", "public_key": ""}), "invalid_public_key"},
		{jsonBody(map[string]string{"name": "laptop", "public_key": "-----BEGIN OPENSSH PRIVATE KEY-----"}), "invalid_public_key"},
		{jsonBody(map[string]string{"name": "laptop", "public_key": key + "\n" + key}), "invalid_public_key"},
		{jsonBody(map[string]string{"name": "", "public_key": key}), "invalid_name"},
	} {
		if code, body := p.api("POST", "/api/v1/ssh-keys", alice, tc.body); code != 400 || errCode(body) != tc.code {
			t.Errorf("POST %s: %d %v; want 400 %s", tc.body, code, body, tc.code)
		}
	}
	code, body := p.api("POST", "/api/v1/ssh-keys", alice, jsonBody(map[string]string{"name": "laptop", "public_key": key}))
	if code != 201 {
		t.Fatalf("add key: %d %v", code, body)
	}
	item := body["item"].(map[string]any)
	if item["fingerprint"] != fp || item["name"] != "laptop" {
		t.Fatalf("stored key: %v; want fingerprint %s", item, fp)
	}
	id := int64(item["id"].(float64))
	// New: pending, with the SSH user name that verifies it.
	if item["verified"] != false || item["verified_at"] != nil || !strings.HasPrefix(item["verify_user"].(string), "verify-") {
		t.Fatalf("a new key: %v; want pending with a verify user", item)
	}
	// A pending key stands in nobody's way: anyone can paste a public key.
	if code, body := p.api("POST", "/api/v1/ssh-keys", bob, jsonBody(map[string]string{"name": "x", "public_key": key})); code != 201 {
		t.Fatalf("bob registers alice's pending key: %d %v", code, body)
	}
	// Her own key again: it is in her list.
	if code, body := p.api("POST", "/api/v1/ssh-keys", alice, jsonBody(map[string]string{"name": "again", "public_key": key})); code != 409 || !strings.Contains(errMessage(body), "this key is already registered") {
		t.Fatalf("alice registers her key twice: %d %v", code, body)
	}
	// Once she has verified it: bob's pending copy is gone, and he cannot
	// add it again.
	if out, err := verifyWithSigner(port, item["verify_user"].(string), signer); err != nil || !strings.Contains(out, "verified") {
		t.Fatalf("alice verifies her key: %q %v", out, err)
	}
	if code, body := p.api("GET", "/api/v1/ssh-keys", bob, ""); code != 200 || len(body["items"].([]any)) != 0 {
		t.Fatalf("bob's keys after alice verified hers: %d %v", code, body)
	}
	if code, body := p.api("POST", "/api/v1/ssh-keys", bob, jsonBody(map[string]string{"name": "x", "public_key": key})); code != 409 || errCode(body) != "conflict" ||
		!strings.Contains(errMessage(body), "another account has already verified this key") {
		t.Fatalf("bob registers alice's verified key: %d %v; want 409 saying another account verified it", code, body)
	}
	if code, body := p.api("GET", "/api/v1/ssh-keys", alice, ""); code != 200 || body["items"].([]any)[0].(map[string]any)["verified"] != true ||
		body["items"].([]any)[0].(map[string]any)["verify_user"] != nil {
		t.Fatalf("alice's verified key: %d %v", code, body)
	}
	if code, body := p.api("GET", "/api/v1/ssh-keys", alice, ""); code != 200 || len(body["items"].([]any)) != 1 {
		t.Fatalf("alice's keys: %d %v", code, body)
	}
	if code, body := p.api("GET", "/api/v1/ssh-keys", bob, ""); code != 200 || len(body["items"].([]any)) != 0 {
		t.Fatalf("bob sees keys: %d %v", code, body)
	}
	if code, _ := p.api("DELETE", "/api/v1/ssh-keys/"+itoa(id), bob, ""); code != 404 {
		t.Fatalf("bob deletes alice's key: %d; want 404", code)
	}
	if code, _ := p.api("DELETE", "/api/v1/ssh-keys/"+itoa(id), alice, ""); code != 204 {
		t.Fatalf("alice deletes her key: %d", code)
	}
	if code, body := p.api("GET", "/api/v1/ssh-keys", alice, ""); len(body["items"].([]any)) != 0 {
		t.Fatalf("after delete: %d %v", code, body)
	}
	entries, _ := p.srv.Store.ListAudit(context.Background(), 20)
	var actions []string
	for _, e := range entries {
		if strings.HasPrefix(e.Action, "ssh_key.") && e.Actor == "alice" {
			actions = append(actions, e.Action)
		}
	}
	if strings.Join(actions, ",") != "ssh_key.delete,ssh_key.verify,ssh_key.create" {
		t.Fatalf("audit: %v", actions)
	}
}

func TestSSHKeysSettingsPage(t *testing.T) {
	p := newPortal(t, func(c *web.Config) { c.SSHAddr = "127.0.0.1:2222" })
	tokenFor(t, p, "alice", "user")
	c := p.client()
	p.login(c, "alice", "alice-password")
	key, fp := newAuthorizedKey(t, "alice@laptop")

	// An SSH key is a credential: a browser adds one only with the
	// password confirmed (sudo), as an API token.
	res, page := p.postFormBody(c, "/settings/ssh-keys", url.Values{"name": {"laptop"}, "public_key": {key}})
	if res.StatusCode != http.StatusForbidden || !strings.Contains(page, `data-testid="sudo-form"`) {
		t.Fatalf("add a key without confirming the password: %d, want 403 with the confirm page", res.StatusCode)
	}
	if keys, _ := p.srv.Store.ListSSHKeys(context.Background(), mustUserID(t, p, "alice")); len(keys) != 0 {
		t.Fatalf("a key was added without the password confirmed: %v", keys)
	}
	p.sudo(c, "alice-password")

	// A bad key: 400, the field's message, and what was typed kept.
	res, page = p.postFormBody(c, "/settings/ssh-keys", url.Values{"name": {"laptop"}, "public_key": {"ssh-rsa garbage"}})
	if res.StatusCode != http.StatusBadRequest || !strings.Contains(page, "not an OpenSSH public key") || !strings.Contains(page, "ssh-rsa garbage") {
		t.Fatalf("bad key: %d\n%s", res.StatusCode, page)
	}
	res, _ = p.postFormBody(c, "/settings/ssh-keys", url.Values{"name": {"laptop"}, "public_key": {key}})
	if res.StatusCode != http.StatusSeeOther {
		t.Fatalf("add key: %d", res.StatusCode)
	}
	res, page = p.get(c, "/settings/ssh-keys")
	if res.StatusCode != 200 || !strings.Contains(page, fp) || !strings.Contains(page, "ssh -p 2222") {
		t.Fatalf("page after adding: %d\n%s", res.StatusCode, page)
	}
	// A cross-site form post is refused (CSRF).
	req, _ := http.NewRequest(http.MethodPost, p.ts.URL+"/settings/ssh-keys", strings.NewReader(url.Values{"name": {"evil"}, "public_key": {key}}.Encode()))
	req.Header.Set("Content-Type", "application/x-www-form-urlencoded")
	req.Header.Set("Sec-Fetch-Site", "cross-site")
	req.Header.Set("Origin", "https://evil.example")
	if res, err := c.Do(req); err != nil || res.StatusCode != http.StatusForbidden {
		t.Fatalf("cross-site add: %v %v", res.StatusCode, err)
	}
	keys, _ := p.srv.Store.ListSSHKeys(context.Background(), mustUserID(t, p, "alice"))
	if len(keys) != 1 {
		t.Fatalf("keys: %v", keys)
	}
	res, _ = p.postFormBody(c, "/settings/ssh-keys/"+itoa(keys[0].ID)+"/delete", url.Values{})
	if res.StatusCode != http.StatusSeeOther {
		t.Fatalf("delete: %d", res.StatusCode)
	}
	if _, page = p.get(c, "/settings/ssh-keys"); strings.Contains(page, fp) {
		t.Fatal("deleted key still listed")
	}
}

func mustUserID(t *testing.T, p *testPortal, name string) int64 {
	t.Helper()
	u, err := p.srv.Store.UserByUsername(context.Background(), name)
	if err != nil {
		t.Fatal(err)
	}
	return u.ID
}

// The command that verifies a pending key is shown to the account that
// added it, on its page (with the flash right after adding) and in its
// API listing, and to no one else: two accounts that added the same
// public key each see their own code only. A verified key shows none.
func TestSSHKeyVerifyCommandOnlyOnAddersPage(t *testing.T) {
	p := newPortal(t, func(c *web.Config) { c.SSHAddr = "127.0.0.1:2222" })
	port := p.serveSSH() // the page names the configured 2222; this one is where the server is
	aliceTok := tokenFor(t, p, "alice", "user")
	bob := tokenFor(t, p, "bob", "user")
	signer, key := newSSHSigner(t, "alice@laptop")
	alice := p.client()
	p.login(alice, "alice", "alice-password")
	p.sudo(alice, "alice-password")
	if res, _ := p.postFormBody(alice, "/settings/ssh-keys", url.Values{"name": {"laptop"}, "public_key": {key}}); res.StatusCode != http.StatusSeeOther {
		t.Fatalf("add key: %d", res.StatusCode)
	}
	if code, body := p.api("POST", "/api/v1/ssh-keys", bob, jsonBody(map[string]string{"name": "pasted", "public_key": key})); code != 201 {
		t.Fatalf("bob adds the same public key: %d %v", code, body)
	}
	verifyUserOf := func(token string) string {
		_, body := p.api("GET", "/api/v1/ssh-keys", token, "")
		items, _ := body["items"].([]any)
		if len(items) != 1 {
			t.Fatalf("keys: %v", body)
		}
		u, _ := items[0].(map[string]any)["verify_user"].(string)
		if !strings.HasPrefix(u, "verify-") {
			t.Fatalf("a pending key's verify user: %v", items[0])
		}
		return u
	}
	aliceUser, bobUser := verifyUserOf(aliceTok), verifyUserOf(bob)
	aliceCmd := "ssh -p 2222 " + aliceUser + "@127.0.0.1"

	_, page := p.get(alice, "/settings/ssh-keys")
	doc := parsePage(t, page)
	if got := strings.TrimSpace(doc.Find("[data-testid=flash]").Text()); !strings.Contains(got, aliceCmd) {
		t.Fatalf("the flash after adding: %q; want it to say to run %q", got, aliceCmd)
	}
	if got := doc.Find("[data-testid=ssh-key-row] [data-testid=ssh-key-verify-command]").Text(); got != aliceCmd {
		t.Fatalf("alice's pending key shows %q; want %q", got, aliceCmd)
	}
	if doc.Find("[data-testid=ssh-key-pending]").Length() != 1 || strings.Contains(page, bobUser) {
		t.Fatal("alice's page: want her one pending key, and nothing of bob's code")
	}
	bobc := p.client()
	p.login(bobc, "bob", "bob-password")
	_, page = p.get(bobc, "/settings/ssh-keys")
	if got := parsePage(t, page).Find("[data-testid=ssh-key-verify-command]").Text(); got != "ssh -p 2222 "+bobUser+"@127.0.0.1" || strings.Contains(page, aliceUser) {
		t.Fatalf("bob's page shows %q (and alice's code: %v)", got, strings.Contains(page, aliceUser))
	}
	_, body := p.api("GET", "/api/v1/ssh-keys", bob, "")
	if items := body["items"].([]any); len(items) != 1 || items[0].(map[string]any)["verify_command"] != "ssh -p 2222 "+bobUser+"@127.0.0.1" {
		t.Fatalf("bob's keys in the API: %v", body)
	}

	// Verified: the row is as any key's, with no command.
	if out, err := verifyWithSigner(port, aliceUser, signer); err != nil || !strings.Contains(out, "verified") {
		t.Fatalf("alice verifies her key: %q %v", out, err)
	}
	_, page = p.get(alice, "/settings/ssh-keys")
	doc = parsePage(t, page)
	if doc.Find("[data-testid=ssh-key-row]").Length() != 1 || doc.Find("[data-testid=ssh-key-pending]").Length() != 0 || strings.Contains(page, "verify-") {
		t.Fatalf("alice's page after verifying:\n%s", page)
	}
}

// The SSH keys page says until when a pending key's code is valid, and
// once it has expired says so instead of showing the spent command. Its
// "New code" button posts (same-origin only, as every form) to a route
// that gives the key a new code, shown right away with its new expiry;
// a cross-site post and another user's post change nothing.
func TestSSHKeysPageVerifyExpiryAndNewCode(t *testing.T) {
	p := newPortal(t, func(c *web.Config) { c.SSHAddr = "127.0.0.1:2222" })
	tokenFor(t, p, "alice", "user")
	tokenFor(t, p, "bob", "user")
	c := p.client()
	p.loginSudo(c, "alice", "alice-password")
	key, _ := newAuthorizedKey(t, "alice@laptop")
	// The key is added on a store clock 25 hours back (moving it ahead
	// would end the browser's session), and read then.
	earlier := time.Now().Add(-25 * time.Hour)
	p.srv.Store.SetClock(func() time.Time { return earlier })
	t.Cleanup(func() { p.srv.Store.SetClock(time.Now) })
	if res, _ := p.postFormBody(c, "/settings/ssh-keys", url.Values{"name": {"laptop"}, "public_key": {key}}); res.StatusCode != http.StatusSeeOther {
		t.Fatalf("add key: %d", res.StatusCode)
	}
	keyOf := func() models.SSHKey {
		keys, err := p.srv.Store.ListSSHKeys(context.Background(), mustUserID(t, p, "alice"))
		if err != nil || len(keys) != 1 {
			t.Fatalf("keys: %v %v", keys, err)
		}
		return keys[0]
	}
	k := keyOf()
	_, page := p.get(c, "/settings/ssh-keys")
	doc := parsePage(t, page)
	wantExpiry := k.VerifyExpiresAt().UTC().Format("2006-01-02 15:04 UTC")
	if got := doc.Find("[data-testid=ssh-key-row] [data-testid=ssh-key-verify-expires]").Text(); got != "The code is valid until "+wantExpiry+"." {
		t.Fatalf("the pending key's expiry: %q; want it valid until %s", got, wantExpiry)
	}
	form := doc.Find("[data-testid=ssh-key-row] form[data-testid=ssh-key-new-code-form]")
	action, _ := form.Attr("action")
	if method, _ := form.Attr("method"); form.Length() != 1 || method != "post" || action != "/settings/ssh-keys/"+itoa(k.ID)+"/verify-code" ||
		form.Find("button[type=submit][data-testid=ssh-key-new-code]").Length() != 1 {
		t.Fatalf("the new code form: %d, action %q", form.Length(), action)
	}

	// 25 hours later (now) the code has expired: said, and its command gone.
	p.srv.Store.SetClock(time.Now)
	_, page = p.get(c, "/settings/ssh-keys")
	doc = parsePage(t, page)
	if got := doc.Find("[data-testid=ssh-key-verify-expired]").Text(); !strings.Contains(got, "expired at "+wantExpiry) ||
		doc.Find("[data-testid=ssh-key-verify-command]").Length() != 0 || strings.Contains(page, k.VerifyUser()) {
		t.Fatalf("the expired code: %q, command shown %v", got, doc.Find("[data-testid=ssh-key-verify-command]").Length())
	}

	// A cross-site post of the form is refused; so is bob's, as a key he
	// does not have.
	req, _ := http.NewRequest(http.MethodPost, p.ts.URL+action, strings.NewReader(""))
	req.Header.Set("Content-Type", "application/x-www-form-urlencoded")
	req.Header.Set("Sec-Fetch-Site", "cross-site")
	req.Header.Set("Origin", "https://evil.example")
	if res, err := c.Do(req); err != nil || res.StatusCode != http.StatusForbidden {
		t.Fatalf("cross-site new code: %v %v; want 403", res.StatusCode, err)
	}
	bob := p.client()
	p.login(bob, "bob", "bob-password")
	if res, _ := p.postFormBody(bob, action, url.Values{}); res.StatusCode != http.StatusNotFound {
		t.Fatalf("bob posts alice's new code form: %d; want 404", res.StatusCode)
	}
	if keyOf().VerifyCode != k.VerifyCode {
		t.Fatal("the code changed on a refused post")
	}

	// Her click: a new code, shown with its new expiry.
	if res, _ := p.postFormBody(c, action, url.Values{}); res.StatusCode != http.StatusSeeOther {
		t.Fatalf("new code: %d", res.StatusCode)
	}
	nk := keyOf()
	if at := nk.VerifyExpiresAt(); at.Before(time.Now().Add(23*time.Hour)) || at.After(time.Now().Add(24*time.Hour)) {
		t.Fatalf("the new code expires at %v; want 24 h from now", at)
	}
	newExpiry := nk.VerifyExpiresAt().UTC().Format("2006-01-02 15:04 UTC")
	newCmd := "ssh -p 2222 " + nk.VerifyUser() + "@127.0.0.1"
	_, page = p.get(c, "/settings/ssh-keys")
	doc = parsePage(t, page)
	if nk.VerifyCode == k.VerifyCode || doc.Find("[data-testid=ssh-key-verify-command]").Text() != newCmd ||
		doc.Find("[data-testid=ssh-key-verify-expires]").Text() != "The code is valid until "+newExpiry+"." ||
		doc.Find("[data-testid=ssh-key-verify-expired]").Length() != 0 || strings.Contains(page, k.VerifyUser()) {
		t.Fatalf("after a new code: want %q valid until %s\n%s", newCmd, newExpiry, doc.Find("[data-testid=ssh-key-row]").Text())
	}
	if got := doc.Find("[data-testid=flash]").Text(); !strings.Contains(got, newCmd) || !strings.Contains(got, newExpiry) {
		t.Fatalf("the flash: %q; want the new command and its expiry", got)
	}
}
