package web_test

import (
	"fmt"
	"net/http"
	"net/url"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"workbench/models"
)

// Colleagues behind one address, across a restart of the portal (an
// upgrade): bob's browser logged in before the restart; after it, someone
// at the same address guesses passwords until the address is held back.
// A new browser waits, and bob's, which the restarted portal still knows,
// logs him in past the delay. The database file holds the browser's token
// only hashed.
func TestKnownBrowserStaysKnownAcrossRestart(t *testing.T) {
	p := newPortal(t)
	tokenFor(t, p, "bob", "user")
	known := p.client()
	p.login(known, "bob", "bob-password")
	u, _ := url.Parse(p.ts.URL + "/login")
	var device string
	for _, ck := range known.Jar.Cookies(u) {
		if ck.Name == "wb_device" {
			device = ck.Value
		}
	}
	if device == "" {
		t.Fatal("no device cookie after a login")
	}

	p = p.restart()
	for _, name := range []string{models.DBFileName, models.DBFileName + "-wal"} {
		if b, err := os.ReadFile(filepath.Join(p.dir, name)); err == nil && strings.Contains(string(b), device) {
			t.Fatalf("%s holds the device token in plain text", name)
		}
	}
	guesser := p.client()
	for i := 0; ; i++ {
		res := p.postForm(guesser, "/login", url.Values{"username": {fmt.Sprintf("user%d", i)}, "password": {"guess-password-1"}})
		if res.StatusCode == http.StatusTooManyRequests {
			break
		}
		if res.StatusCode != http.StatusUnauthorized || i > 100 {
			t.Fatalf("guess %d: %d", i, res.StatusCode)
		}
	}
	if res := p.postForm(p.client(), "/login", url.Values{"username": {"bob"}, "password": {"bob-password"}}); res.StatusCode != http.StatusTooManyRequests {
		t.Fatalf("a new browser at the held-back address: %d, want 429", res.StatusCode)
	}
	// The cookie jar keeps cookies by host, not port: the restarted
	// portal on its new port gets bob's cookie as the old one would.
	if res := p.postForm(known, "/login", url.Values{"username": {"bob"}, "password": {"bob-password"}}); res.StatusCode != http.StatusSeeOther {
		t.Fatalf("bob's browser, known before the restart, at the held-back address: %d, want 303", res.StatusCode)
	}
}

// Failed SSH key verification attempts are counted across a restart of
// the portal: 10 wrong codes before it, and the right code after it is
// still told "too many verification attempts" (a guesser gets no fresh
// tries by waiting for an upgrade); 10 minutes on by the restarted
// portal's clock, the right code verifies the key.
func TestSSHVerifyAttemptsCountedAcrossRestart(t *testing.T) {
	p := newPortal(t)
	port := p.serveSSH()
	alice := tokenFor(t, p, "alice", "user")
	path, pub := newSSHKeyFile(t, "alice-laptop")
	code, body := p.api("POST", "/api/v1/ssh-keys", alice, jsonBody(map[string]string{"name": "laptop", "public_key": pub}))
	if code != 201 {
		t.Fatalf("add: %d %v", code, body)
	}
	right := body["item"].(map[string]any)["verify_user"].(string)
	a := sshClient{t: t, port: port, key: path}
	for i := range 10 {
		wrong := fmt.Sprintf("verify-wrongcode%d", i)[:len(right)]
		if out, errs, status := a.run(wrong, ""); status != 255 || out != "" || !strings.Contains(errs, "Permission denied") {
			t.Fatalf("wrong code %d: %d %q %q; want Permission denied", i+1, status, out, errs)
		}
	}

	p = p.restart()
	a = sshClient{t: t, port: p.serveSSH(), key: path}
	out, errs, status := a.run(right, "")
	if status != 1 || out != "" || !strings.HasPrefix(errs, "Too many verification attempts from this address; try again later") {
		t.Fatalf("the right code after a restart, past the limit: %d %q %q; want 1 and too many attempts", status, out, errs)
	}
	if keys := sshKeyItems(t, p, alice); keys[0]["verified"] != false {
		t.Fatalf("verified past the limit: %v", keys)
	}
	later := time.Now().Add(10*time.Minute + time.Second)
	p.srv.Manager.SetClock(func() time.Time { return later })
	t.Cleanup(func() { p.srv.Manager.SetClock(time.Now) })
	if out, errs, status := a.run(right, ""); status != 0 || !strings.Contains(out, "verified") {
		t.Fatalf("the right code 10 minutes on: %d %q %q", status, out, errs)
	}
}
