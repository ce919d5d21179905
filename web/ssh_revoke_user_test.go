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
)

// sshKeyOf registers a fresh ed25519 key for token's user, verifies it as
// its holder does (through the SSH server on port) and returns its signer.
func sshKeyOf(t *testing.T, p *testPortal, port, token, name string) ssh.Signer {
	t.Helper()
	_, priv, err := ed25519.GenerateKey(rand.Reader)
	if err != nil {
		t.Fatal(err)
	}
	signer, err := ssh.NewSignerFromKey(priv)
	if err != nil {
		t.Fatal(err)
	}
	pub := strings.TrimSpace(string(ssh.MarshalAuthorizedKey(signer.PublicKey())))
	code, body := p.api("POST", "/api/v1/ssh-keys", token, jsonBody(map[string]string{"name": name, "public_key": pub}))
	if code != 201 {
		t.Fatalf("register %s: %d %v", name, code, body)
	}
	verifyUser, _ := body["item"].(map[string]any)["verify_user"].(string)
	if out, err := verifyWithSigner(port, verifyUser, signer); err != nil || !strings.Contains(out, "verified") {
		t.Fatalf("verify %s as %q: %q %v", name, verifyUser, out, err)
	}
	return signer
}

// verifyWithSigner connects Go's SSH client as verifyUser with signer, as
// the verify command does, and returns what the session printed.
func verifyWithSigner(port, verifyUser string, signer ssh.Signer) (string, error) {
	client, err := ssh.Dial("tcp", "127.0.0.1:"+port, &ssh.ClientConfig{User: verifyUser, Auth: []ssh.AuthMethod{ssh.PublicKeys(signer)},
		HostKeyCallback: ssh.InsecureIgnoreHostKey(), Timeout: 30 * time.Second})
	if err != nil {
		return "", err
	}
	defer client.Close()
	sess, err := client.NewSession()
	if err != nil {
		return "", err
	}
	defer sess.Close()
	out, err := sess.Output("")
	return string(out), err
}

// openSSHSession connects Go's SSH client to the portal's SSH server as
// target with signer and opens a session channel; it returns a channel
// that yields once the server has closed the connection.
func openSSHSession(t *testing.T, port, target string, signer ssh.Signer) <-chan struct{} {
	t.Helper()
	client, err := ssh.Dial("tcp", "127.0.0.1:"+port, &ssh.ClientConfig{User: target, Auth: []ssh.AuthMethod{ssh.PublicKeys(signer)},
		HostKeyCallback: ssh.InsecureIgnoreHostKey(), Timeout: 30 * time.Second})
	if err != nil {
		t.Fatalf("ssh %s: %v", target, err)
	}
	t.Cleanup(func() { client.Close() })
	sess, err := client.NewSession()
	if err != nil {
		t.Fatalf("open a session: %v", err)
	}
	t.Cleanup(func() { sess.Close() })
	closed := make(chan struct{})
	go func() { client.Wait(); close(closed) }()
	return closed
}

func waitSSHClosed(t *testing.T, closed <-chan struct{}, what string) {
	t.Helper()
	select {
	case <-closed:
	case <-time.After(time.Minute):
		t.Fatalf("%s: the SSH connection is still open", what)
	}
}

// revokedSSH returns the ssh.connection.revoked audit rows of workbench id
// as "actor: why".
func revokedSSH(t *testing.T, p *testPortal, id string) []string {
	t.Helper()
	es, err := p.srv.Store.ListAudit(context.Background(), 200)
	if err != nil {
		t.Fatal(err)
	}
	var out []string
	for _, e := range es {
		if e.Action == "ssh.connection.revoked" && e.Target == id {
			var after struct{ Why string }
			json.Unmarshal([]byte(e.After), &after)
			out = append(out, e.Actor+": "+after.Why)
		}
	}
	return out
}

func hasString(list []string, want string) bool {
	for _, s := range list {
		if s == want {
			return true
		}
	}
	return false
}

// An admin's password reset or disable closes the user's open SSH
// connections at once (the handler calls the SSH server), each audited
// with who and why; a revocation made elsewhere (the store directly, as
// another process would) is caught by the connection's own periodic check.
// Other users' connections stay open.
func TestSSHClosedWhenUserDisabledOrPasswordReset(t *testing.T) {
	p := newPortal(t)
	port := p.serveSSH()
	ctx := context.Background()
	aliceTok := tokenFor(t, p, "alice", "user")
	bobTok := tokenFor(t, p, "bob", "user")
	alice, _ := p.srv.Store.UserByUsername(ctx, "alice")
	bob, _ := p.srv.Store.UserByUsername(ctx, "bob")
	// Stopped workbenches: SSH connects to them (a session says "start it
	// first"), and no stop event can be what closes the connections here.
	newWB := func(owner int64, name string) string {
		wb := &models.Workbench{Name: name, OwnerID: owner, ImageID: 1, FlavorID: 1}
		if err := p.srv.Store.CreateWorkbench(ctx, wb, models.GPUNeed{}, nil); err != nil {
			t.Fatal(err)
		}
		if err := p.srv.Store.SetWorkbenchState(ctx, wb.ID, models.StateStopped, 0, "", nil); err != nil {
			t.Fatal(err)
		}
		return wb.ID
	}
	aliceWB, bobWB := newWB(alice.ID, "box"), newWB(bob.ID, "box")
	aliceKey, bobKey := sshKeyOf(t, p, port, aliceTok, "alice-laptop"), sshKeyOf(t, p, port, bobTok, "bob-laptop")
	admin := p.client()
	p.loginSudo(admin, "admin", adminPassword)

	// 1. A password reset closes her open connections, by id and by name.
	s1 := openSSHSession(t, port, aliceWB, aliceKey)
	s2 := openSSHSession(t, port, "box", aliceKey)
	sb := openSSHSession(t, port, bobWB, bobKey)
	if res := p.postForm(admin, "/admin/users/"+itoa(alice.ID)+"/password", url.Values{"password": {"alice-new-password"}}); res.StatusCode != http.StatusSeeOther {
		t.Fatalf("reset password: %d", res.StatusCode)
	}
	waitSSHClosed(t, s1, "password reset")
	waitSSHClosed(t, s2, "password reset, second connection")
	if got := revokedSSH(t, p, aliceWB); len(got) != 2 || !hasString(got, "admin: the password was reset") {
		t.Errorf("audit of the closed connections: %v", got)
	}
	select {
	case <-sb:
		t.Fatal("bob's connection closed when alice's password was reset")
	default:
	}
	// Her key is not a password: it still opens her workbench afterwards
	// (deleting it is hers to do on the SSH keys page).
	s1 = openSSHSession(t, port, aliceWB, aliceKey)

	// 2. Disabling her closes it too, and refuses her key afterwards.
	if res := p.postForm(admin, "/admin/users/"+itoa(alice.ID)+"/disable", url.Values{"disabled": {"true"}, "confirmed": {"true"}}); res.StatusCode != http.StatusSeeOther {
		t.Fatalf("disable: %d", res.StatusCode)
	}
	waitSSHClosed(t, s1, "disable")
	if got := revokedSSH(t, p, aliceWB); !hasString(got, "admin: the account was disabled") {
		t.Errorf("audit of the connection closed by the disable: %v", got)
	}
	if _, err := ssh.Dial("tcp", "127.0.0.1:"+port, &ssh.ClientConfig{User: aliceWB, Auth: []ssh.AuthMethod{ssh.PublicKeys(aliceKey)},
		HostKeyCallback: ssh.InsecureIgnoreHostKey(), Timeout: 30 * time.Second}); err == nil || !strings.Contains(err.Error(), "unable to authenticate") {
		t.Fatalf("a disabled user's key connects: %v", err)
	}

	// 3. Without the handler (another process, the command line): each
	// connection's own check ends it once bob's credentials are reset, and
	// once he is disabled.
	p.srv.SSH().SetKeyCheckEvery(100 * time.Millisecond)
	if _, err := p.srv.Store.RevokeUserAccess(ctx, bob.ID); err != nil {
		t.Fatal(err)
	}
	waitSSHClosed(t, sb, "credentials reset in the store")
	sb = openSSHSession(t, port, bobWB, bobKey)
	if err := p.srv.Store.SetUserDisabled(ctx, bob.ID, true); err != nil {
		t.Fatal(err)
	}
	waitSSHClosed(t, sb, "disabled in the store")
	got := revokedSSH(t, p, bobWB)
	for _, want := range []string{"system: the account's credentials were reset", "system: the account was disabled"} {
		if !hasString(got, want) {
			t.Errorf("audit lacks %q: %v", want, got)
		}
	}
}
