//go:build linux

package web_test

import (
	"context"
	"errors"
	"fmt"
	"io"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"golang.org/x/crypto/ssh"

	"workbench/models"
	"workbench/web"
)

// querySigner offers a public key without its private key: Go's SSH
// client first asks the server whether the key would do (an unsigned
// query) and signs only if it would, so signAsked says the server
// answered yes to the query alone.
type querySigner struct {
	pk        ssh.PublicKey
	signAsked atomic.Bool
}

func (q *querySigner) PublicKey() ssh.PublicKey { return q.pk }

func (q *querySigner) Sign(io.Reader, []byte) (*ssh.Signature, error) {
	q.signAsked.Store(true)
	return nil, errors.New("no private key here")
}

// sshKeyItems are token's user's keys as GET /api/v1/ssh-keys lists them.
func sshKeyItems(t *testing.T, p *testPortal, token string) []map[string]any {
	t.Helper()
	code, body := p.api("GET", "/api/v1/ssh-keys", token, "")
	if code != 200 {
		t.Fatalf("list keys: %d %v", code, body)
	}
	var out []map[string]any
	for _, it := range body["items"].([]any) {
		out = append(out, it.(map[string]any))
	}
	return out
}

// A key is pending until its holder connects once as verify-<code> with
// it, with Debian's OpenSSH client. Mallory pastes Alice's public key: his
// pending copy opens nothing (Alice's ssh does not reach his workbench of
// the same name), he cannot verify it without her private key (not with
// his own key, not with an unsigned query, which the server answers
// before any signature), and it does not stop Alice from adding and
// verifying her own copy, which removes his.
func TestSSHKeyVerification(t *testing.T) {
	p, _ := enginePortal(t)
	port := p.serveSSH()
	ctx := context.Background()
	alice := tokenFor(t, p, "alice", "user")
	mallory := tokenFor(t, p, "mallory", "user")
	code, wb := p.api("POST", "/api/v1/workbenches", alice, `{"name":"analysis","image":"fake","flavor":"CPU small"}`)
	if code != 202 {
		t.Fatalf("launch: %d %v", code, wb)
	}
	aliceWB := wb["id"].(string)
	waitState(t, p, alice, aliceWB, "running")
	// Mallory's workbench of the same name, stopped: a key that reached it
	// would be told "is stopped" (status 1), not refused (255).
	malloryWB := &models.Workbench{Name: "analysis", OwnerID: mustUserID(t, p, "mallory"), ImageID: 1, FlavorID: 1}
	if err := p.srv.Store.CreateWorkbench(ctx, malloryWB, models.GPUNeed{}, nil); err != nil {
		t.Fatal(err)
	}
	if err := p.srv.Store.SetWorkbenchState(ctx, malloryWB.ID, models.StateStopped, 0, "", nil); err != nil {
		t.Fatal(err)
	}
	alicePath, alicePub := newSSHKeyFile(t, "alice-laptop")
	a := sshClient{t: t, port: port, key: alicePath}
	refused := func(c sshClient, target, what string) {
		t.Helper()
		if out, errs, code := c.run(target, "", "echo", "in"); code != 255 || out != "" || !strings.Contains(errs, "Permission denied") {
			t.Fatalf("%s: %d %q %q; want Permission denied", what, code, out, errs)
		}
	}
	add := func(token, name string) map[string]any {
		t.Helper()
		code, body := p.api("POST", "/api/v1/ssh-keys", token, jsonBody(map[string]string{"name": name, "public_key": alicePub}))
		if code != 201 {
			t.Fatalf("add %s: %d %v", name, code, body)
		}
		return body["item"].(map[string]any)
	}
	pending := func(item map[string]any) {
		t.Helper()
		if u, _ := item["verify_user"].(string); item["verified"] != false || !strings.HasPrefix(u, "verify-") {
			t.Fatalf("a new key: %v; want pending", item)
		}
	}

	// 1. Mallory adds Alice's public key: pending, it opens nothing.
	stolen := add(mallory, "stolen")
	refused(a, "analysis", "alice's key while only mallory's pending copy exists")
	refused(a, malloryWB.ID, "alice's key into mallory's workbench by id")
	pending(stolen)

	// 2. He cannot verify it: his own key with his code is refused...
	malloryPath, _ := newSSHKeyFile(t, "mallory-laptop")
	m := sshClient{t: t, port: port, key: malloryPath}
	refused(m, stolen["verify_user"].(string), "mallory's own key with his code")
	// ...and so is Alice's public key alone, though the server accepts
	// the unsigned query for it (the client then has nothing to sign with).
	pk, _, _, _, err := ssh.ParseAuthorizedKey([]byte(alicePub))
	if err != nil {
		t.Fatal(err)
	}
	q := &querySigner{pk: pk}
	if _, err := ssh.Dial("tcp", "127.0.0.1:"+port, &ssh.ClientConfig{User: stolen["verify_user"].(string), Auth: []ssh.AuthMethod{ssh.PublicKeys(q)},
		HostKeyCallback: ssh.InsecureIgnoreHostKey(), Timeout: 30 * time.Second}); err == nil {
		t.Fatal("connected with a public key alone")
	}
	if !q.signAsked.Load() {
		t.Fatal("the server refused the unsigned query: this check tests nothing")
	}
	if keys := sshKeyItems(t, p, mallory); len(keys) != 1 || keys[0]["verified"] != false {
		t.Fatalf("mallory's copy after his tries: %v; want still pending", keys)
	}

	// 3. Alice adds her key all the same; pending, it opens nothing yet,
	// and a code that is not this key's does not verify it.
	mine := add(alice, "laptop")
	pending(mine)
	if mine["verify_user"] == stolen["verify_user"] {
		t.Fatal("two pending keys share a verify user")
	}
	refused(a, "analysis", "alice's pending key")
	refused(a, "verify-abcdefghij", "alice's key with a made-up code")

	// 4. She verifies it: one line, status 0, nothing run in a workbench.
	out, errs, code := a.run(mine["verify_user"].(string), "")
	want := `Key "laptop" of account alice verified: ssh -p ` + port + ` <workbench>@127.0.0.1 now opens alice's workbenches.` + "\n"
	if code != 0 || out != want {
		t.Fatalf("verify: %d %q %q; want 0 %q", code, out, errs, want)
	}
	entries, _ := p.srv.Store.ListAudit(ctx, 50)
	verifications := 0
	for _, e := range entries {
		switch {
		case e.Action == "ssh.session.start":
			t.Fatalf("a session ran before any key was verified: %+v", e)
		case e.Action == "ssh_key.verify" && e.Actor == "alice" && strings.Contains(e.After, `"others_pending_removed":1`):
			verifications++
		}
	}
	if verifications != 1 {
		t.Fatalf("%d ssh_key.verify rows for alice, want 1: %+v", verifications, entries)
	}
	// The command is spent: it does not verify (nor open) anything again.
	refused(a, mine["verify_user"].(string), "the verify command a second time")

	// 5. Her key now reaches her running workbench (the fake image has no
	// shell, which the session says: it got there), and only hers.
	if _, errs, code := a.run("analysis", "", "echo", "hi"); code != 1 || !strings.Contains(errs, "has no shell (/bin/sh)") {
		t.Fatalf("alice's verified key into her workbench: %d %q", code, errs)
	}
	refused(a, malloryWB.ID, "alice's verified key into mallory's workbench")
	if keys := sshKeyItems(t, p, alice); len(keys) != 1 || keys[0]["verified"] != true || keys[0]["verified_at"] == nil || keys[0]["verify_user"] != nil {
		t.Fatalf("alice's keys: %v", keys)
	}
	// Mallory's pending copy went with her verification, and the key is
	// hers now.
	if keys := sshKeyItems(t, p, mallory); len(keys) != 0 {
		t.Fatalf("mallory's keys after alice verified: %v", keys)
	}
	if code, body := p.api("POST", "/api/v1/ssh-keys", mallory, jsonBody(map[string]string{"name": "again", "public_key": alicePub})); code != 409 {
		t.Fatalf("mallory adds alice's verified key: %d %v", code, body)
	}
}

// A pending key's code verifies it for 24 hours, on the store's clock.
// Past that, the verify command (Debian's OpenSSH client, the holder's
// key) is answered that the code has expired and where to get a new one,
// naming no account, and the key stays pending; the API then shows no
// command. Its owner (no one else: 404) gets a new code, audited: the old
// one is spent, the new one verifies the key.
func TestSSHVerifyCodeExpiresAndIsRenewed(t *testing.T) {
	p := newPortal(t, func(c *web.Config) { c.PublicURL = "https://gpu.example.org" })
	port := p.serveSSH()
	ctx := context.Background()
	alice := tokenFor(t, p, "alice", "user")
	bob := tokenFor(t, p, "bob", "user")
	path, pub := newSSHKeyFile(t, "alice-laptop")
	a := sshClient{t: t, port: port, key: path}
	code, body := p.api("POST", "/api/v1/ssh-keys", alice, jsonBody(map[string]string{"name": "laptop", "public_key": pub}))
	if code != 201 {
		t.Fatalf("add: %d %v", code, body)
	}
	item := body["item"].(map[string]any)
	id := itoa(int64(item["id"].(float64)))
	oldUser := item["verify_user"].(string)
	created, _ := time.Parse(time.RFC3339Nano, item["created_at"].(string))
	expires, err := time.Parse(time.RFC3339, item["verify_expires_at"].(string))
	if err != nil || !expires.Equal(created.Add(24*time.Hour)) || !strings.HasSuffix(item["verify_expires_at"].(string), "Z") {
		t.Fatalf("verify_expires_at %v (%v); want created_at %v + 24 h, in UTC", item["verify_expires_at"], err, created)
	}

	later := time.Now().Add(24*time.Hour + time.Minute)
	p.srv.Store.SetClock(func() time.Time { return later })
	t.Cleanup(func() { p.srv.Store.SetClock(time.Now) })
	out, errs, status := a.run(oldUser, "")
	want := "This verification code has expired (codes are valid for 24 hours); nothing was verified. Add the key again or ask for a new code on https://gpu.example.org/settings/ssh-keys.\n"
	if status != 1 || out != "" || errs != want {
		t.Fatalf("the expired code: %d %q %q; want 1 and %q", status, out, errs, want)
	}
	keys := sshKeyItems(t, p, alice)
	if len(keys) != 1 || keys[0]["verified"] != false || keys[0]["verify_user"] != nil || keys[0]["verify_command"] != nil || keys[0]["verify_expires_at"] == nil {
		t.Fatalf("the key after its expired code: %v; want pending, with its expiry and no command", keys)
	}

	if code, body := p.api("POST", "/api/v1/ssh-keys/"+id+"/verify-code", bob, ""); code != 404 || errCode(body) != "not_found" {
		t.Fatalf("bob asks for a new code for alice's key: %d %v; want 404", code, body)
	}
	code, body = p.api("POST", "/api/v1/ssh-keys/"+id+"/verify-code", alice, "")
	if code != 200 {
		t.Fatalf("a new code: %d %v", code, body)
	}
	item = body["item"].(map[string]any)
	newUser, _ := item["verify_user"].(string)
	expires, _ = time.Parse(time.RFC3339, item["verify_expires_at"].(string))
	if !strings.HasPrefix(newUser, "verify-") || newUser == oldUser || !expires.Equal(later.Add(24*time.Hour)) {
		t.Fatalf("the new code: %v; want a new verify user expiring 24 h from now (%v)", item, later.UTC().Add(24*time.Hour))
	}
	if out, errs, status := a.run(oldUser, "", "echo", "in"); status != 255 || out != "" || !strings.Contains(errs, "Permission denied") {
		t.Fatalf("the old code after a new one: %d %q %q; want Permission denied", status, out, errs)
	}
	if out, errs, status := a.run(newUser, ""); status != 0 || !strings.Contains(out, `Key "laptop" of account alice verified`) {
		t.Fatalf("the new code: %d %q %q", status, out, errs)
	}
	if keys := sshKeyItems(t, p, alice); keys[0]["verified"] != true || keys[0]["verify_expires_at"] != nil {
		t.Fatalf("after verifying: %v", keys)
	}
	if code, body := p.api("POST", "/api/v1/ssh-keys/"+id+"/verify-code", alice, ""); code != 409 || !strings.Contains(errMessage(body), "already verified") {
		t.Fatalf("a new code for a verified key: %d %v; want 409", code, body)
	}
	entries, _ := p.srv.Store.ListAudit(ctx, 20)
	renewed := 0
	for _, e := range entries {
		if e.Action == "ssh_key.verify_code" && e.Actor == "alice" && strings.Contains(e.After, `"key_id":`+id) {
			renewed++
			if strings.Contains(e.After, strings.TrimPrefix(newUser, "verify-")) {
				t.Fatalf("the audit row holds the code: %s", e.After)
			}
		}
	}
	if renewed != 1 {
		t.Fatalf("%d ssh_key.verify_code rows, want 1: %+v", renewed, entries)
	}
}

// Failed verify attempts are bounded per address: after 10 codes that name
// no pending key (each refused as an unknown key is, naming no account),
// every verify connection from the address is told "too many verification
// attempts", the right code too, and nothing is verified; 10 minutes on
// (the manager's clock), the right code verifies the key.
func TestSSHVerifyAttemptsLimited(t *testing.T) {
	p := newPortal(t)
	port := p.serveSSH()
	alice := tokenFor(t, p, "alice", "user")
	path, pub := newSSHKeyFile(t, "alice-laptop")
	a := sshClient{t: t, port: port, key: path}
	code, body := p.api("POST", "/api/v1/ssh-keys", alice, jsonBody(map[string]string{"name": "laptop", "public_key": pub}))
	if code != 201 {
		t.Fatalf("add: %d %v", code, body)
	}
	right := body["item"].(map[string]any)["verify_user"].(string)
	for i := range 10 {
		wrong := fmt.Sprintf("verify-wrongcode%d", i)[:len(right)]
		if out, errs, status := a.run(wrong, ""); status != 255 || out != "" || !strings.Contains(errs, "Permission denied") || strings.Contains(errs, "alice") {
			t.Fatalf("wrong code %d: %d %q %q; want Permission denied", i+1, status, out, errs)
		}
	}
	for _, user := range []string{right, "verify-abcdefghij"} {
		out, errs, status := a.run(user, "")
		if status != 1 || out != "" || !strings.HasPrefix(errs, "Too many verification attempts from this address; try again later") || strings.Contains(errs, "alice") {
			t.Fatalf("%s past the limit: %d %q %q; want 1 and too many attempts", user, status, out, errs)
		}
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
