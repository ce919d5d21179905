package main

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"os"
	"strings"
	"testing"

	"golang.org/x/sys/unix"

	"workbench/models"
)

// cliPortal is a portal served on a data directory with the helpers the
// user commands' tests share: the CLI on that directory, logins and API
// calls on the running portal, and its database read beside it.
type cliPortal struct {
	t   *testing.T
	dir string
	url string
}

func newCLIPortal(t *testing.T) *cliPortal {
	dir := t.TempDir()
	ts := serving(t, dir, "admin-password-1")
	return &cliPortal{t: t, dir: dir, url: ts.URL}
}

// cli runs `workbench ARGS --data-dir DIR` with stdin.
func (p *cliPortal) cli(stdin string, args ...string) (string, string, error) {
	p.t.Helper()
	return runCLI(p.t, stdin, append(args, "--data-dir", p.dir)...)
}

// must runs the command and fails the test if it fails.
func (p *cliPortal) must(stdin string, args ...string) string {
	p.t.Helper()
	out, errOut, err := p.cli(stdin, args...)
	if err != nil {
		p.t.Fatalf("workbench %s: %v %s", strings.Join(args, " "), err, errOut)
	}
	return out
}

// login is the status of a password sign-in on the running portal (303:
// signed in; 401: refused).
func (p *cliPortal) login(username, password string) int {
	p.t.Helper()
	req, _ := http.NewRequest(http.MethodPost, p.url+"/login", strings.NewReader(url.Values{"username": {username}, "password": {password}}.Encode()))
	req.Header.Set("Content-Type", "application/x-www-form-urlencoded")
	req.Header.Set("Origin", p.url)
	res, err := (&http.Client{CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }}).Do(req)
	if err != nil {
		p.t.Fatal(err)
	}
	res.Body.Close()
	return res.StatusCode
}

// me is the status and username GET /api/v1/me answers token with.
func (p *cliPortal) me(token string) (int, string) {
	p.t.Helper()
	req, _ := http.NewRequest(http.MethodGet, p.url+"/api/v1/me", nil)
	req.Header.Set("Authorization", "Bearer "+token)
	res, err := http.DefaultClient.Do(req)
	if err != nil {
		p.t.Fatal(err)
	}
	defer res.Body.Close()
	var body struct {
		Username string `json:"username"`
	}
	_ = json.NewDecoder(res.Body).Decode(&body)
	return res.StatusCode, body.Username
}

// store opens the portal's database beside it (closed with the test).
func (p *cliPortal) store() *models.Store {
	p.t.Helper()
	s, err := models.Open(context.Background(), p.dir, nil)
	if err != nil {
		p.t.Fatal(err)
	}
	p.t.Cleanup(func() { s.Close() })
	return s
}

// audited counts the audit rows by the command line of action on target.
func (p *cliPortal) audited(action, target string) int {
	p.t.Helper()
	entries, err := p.store().ListAudit(context.Background(), 100)
	if err != nil {
		p.t.Fatal(err)
	}
	n := 0
	for _, e := range entries {
		if e.Actor == "cli" && e.Action == action && e.Target == target && strings.HasPrefix(e.Via, "command line as ") {
			n++
		}
	}
	return n
}

// refused runs a command that must fail with want in its message, exit
// status 1, and print nothing on stdout.
func (p *cliPortal) refused(stdin, want string, args ...string) {
	p.t.Helper()
	out, _, err := p.cli(stdin, args...)
	if err == nil || !strings.Contains(err.Error(), want) {
		p.t.Errorf("workbench %s: %v; want an error saying %q", strings.Join(args, " "), err, want)
		return
	}
	if code := exitCode(err, io.Discard); code != 1 || out != "" {
		p.t.Errorf("workbench %s: exit %d, stdout %q; want 1 and nothing", strings.Join(args, " "), code, out)
	}
}

// An administrator renames an account from the shell while the portal
// runs: the same refusals as the users page (a taken name, an invalid
// one, an unknown or deleted account), then the rename, which the running
// portal honours at once (the new name signs in with the old password, the
// old name no longer does, the account's API token still works and says
// the new name), told to the user and audited as the command line's.
func TestUserRenameFromTheShell(t *testing.T) {
	p := newCLIPortal(t)
	p.must("alice-password-1\n", "user", "add", "alice", "--password-stdin")
	p.must("bob-password-1\n", "user", "add", "bob", "--password-stdin")
	token := strings.TrimSpace(p.must("", "token", "create", "alice"))

	p.refused("", `the new user name "bob" is already taken`, "user", "rename", "alice", "bob")
	p.refused("", `the new user name "Not A Name!"`, "user", "rename", "alice", "Not A Name!")
	p.refused("", `the new user name "deleted-9"`, "user", "rename", "alice", "deleted-9")
	p.refused("", `user "nobody": not found`, "user", "rename", "nobody", "somebody")
	p.refused("", "usage: workbench user rename OLD NEW", "user", "rename", "alice")
	if code := p.login("alice", "alice-password-1"); code != http.StatusSeeOther {
		t.Fatalf("a refused rename changed the account: alice's login %d", code)
	}

	out := p.must("", "user", "rename", "alice", "alicia")
	if !strings.Contains(out, "renamed alice to alicia; they sign in as alicia from now on and were told in their notifications") {
		t.Errorf("rename said %q", out)
	}
	if code := p.login("alicia", "alice-password-1"); code != http.StatusSeeOther {
		t.Errorf("login as alicia with the password alice had: %d, want 303", code)
	}
	if code := p.login("alice", "alice-password-1"); code != http.StatusUnauthorized {
		t.Errorf("login as alice after the rename: %d, want 401", code)
	}
	if code, name := p.me(token); code != http.StatusOK || name != "alicia" {
		t.Errorf("alice's API token after the rename: %d %q, want 200 alicia", code, name)
	}
	s := p.store()
	u, err := s.UserByUsername(context.Background(), "alicia")
	if err != nil {
		t.Fatal(err)
	}
	notes, err := s.ListNotifications(context.Background(), u.ID, 10)
	if err != nil || len(notes) != 1 || !strings.Contains(notes[0].Message, "renamed your account from alice to alicia on the server's command line: sign in as alicia") {
		t.Errorf("alicia's notifications: %+v %v", notes, err)
	}

	// The same name again changes nothing and records nothing.
	if out := p.must("", "user", "rename", "alicia", "alicia"); !strings.Contains(out, "alicia already has that name; nothing changed") {
		t.Errorf("rename to the same name said %q", out)
	}
	// --json: the account as `user list --json` lists it.
	var answer struct {
		Renamed     bool        `json:"renamed"`
		OldUsername string      `json:"old_username"`
		User        models.User `json:"user"`
	}
	if err := json.Unmarshal([]byte(p.must("", "user", "rename", "alicia", "ally", "--json")), &answer); err != nil {
		t.Fatal(err)
	}
	if !answer.Renamed || answer.OldUsername != "alicia" || answer.User.Username != "ally" || answer.User.ID != u.ID {
		t.Errorf("rename --json: %+v", answer)
	}
	if n := p.audited("user.rename", "alice"); n != 1 {
		t.Errorf("%d renames of alice audited as the command line's, want 1", n)
	}
	if n := p.audited("user.rename", "alicia"); n != 1 {
		t.Errorf("%d renames of alicia audited as the command line's, want 1 (the one to the same name records nothing)", n)
	}
}

// An administrator deletes an account from the shell while the portal
// runs. Without the name typed again nothing is deleted: a script must give
// --confirm NAME, and a wrong one is refused; the last administrator who
// can sign in is refused, as on the users page. Deleted, the account's
// token and password stop working on the running portal at once, its name
// is free for a new account, its record stays as deleted-<id> (which no
// command finds to change), the output says the portal removes its
// containers and home volume, and it is audited as the command line's.
func TestUserDeleteFromTheShell(t *testing.T) {
	p := newCLIPortal(t)
	p.must("bob-password-1\n", "user", "add", "bob", "--password-stdin")
	token := strings.TrimSpace(p.must("", "token", "create", "bob"))

	p.refused("", "to delete bob, confirm with --confirm bob (standard input is not a terminal", "user", "delete", "bob")
	p.refused("", `--confirm "bobby" is not the account's name, bob; nothing was deleted`, "user", "delete", "bob", "--confirm", "bobby")
	p.refused("", `user "nobody": not found`, "user", "delete", "nobody", "--confirm", "nobody")
	p.refused("", "usage: workbench user delete NAME --confirm NAME", "user", "delete")
	p.refused("", "cannot delete admin: it is the last administrator who can sign in; make another user an administrator first, nothing was deleted",
		"user", "delete", "admin", "--confirm", "admin")
	if code, _ := p.me(token); code != http.StatusOK {
		t.Fatalf("a refused delete ended bob's token: %d", code)
	}

	out := p.must("", "user", "delete", "bob", "--confirm", "bob")
	s := p.store()
	tomb, err := s.UserByID(context.Background(), mustUser(t, s, "deleted-", "bob").ID)
	if err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{
		"deleted the account bob; its record stays as " + tomb.Username + " for its bills and usage",
		"ended: its sign-ins, 1 token, 0 SSH keys",
		"its home volume is removed by the portal (now if it is running: at its next reconciliation, every WORKBENCH_RECONCILE_INTERVAL; else at its next start)",
	} {
		if !strings.Contains(out, want) {
			t.Errorf("delete said %q; want %q in it", out, want)
		}
	}
	if !tomb.Deleted() || !tomb.Disabled || tomb.PasswordHash != "" {
		t.Errorf("bob's record after the delete: %+v, want a disabled tombstone without a password", tomb)
	}
	// `user list` says nobody signs in as the tombstone (it said "password").
	list := p.must("", "user", "list")
	for _, line := range strings.Split(list, "\n") {
		if f := strings.Fields(line); len(f) >= 4 && f[0] == tomb.Username && (f[2] != "deleted" || f[3] != "none") {
			t.Errorf("user list shows the tombstone as %q, want state deleted and sign-in none", line)
		}
	}
	if !strings.Contains(list, tomb.Username) {
		t.Errorf("user list %q does not list the tombstone %s", list, tomb.Username)
	}
	if code, _ := p.me(token); code != http.StatusUnauthorized {
		t.Errorf("bob's API token after the delete: %d, want 401", code)
	}
	if code := p.login("bob", "bob-password-1"); code != http.StatusUnauthorized {
		t.Errorf("bob's login after the delete: %d, want 401", code)
	}
	if n := p.audited("user.delete", "bob"); n != 1 {
		t.Errorf("%d deletions of bob audited as the command line's, want 1", n)
	}
	// The tombstone is nobody to rename or delete.
	p.refused("", `user "`+tomb.Username+`": not found (it is a deleted account's record`, "user", "delete", tomb.Username, "--confirm", tomb.Username)
	p.refused("", `user "`+tomb.Username+`": not found`, "user", "rename", tomb.Username, "robert")
	// The name is free again.
	p.must("", "user", "add", "bob")

	// With a second administrator the first can go; then the second is
	// the last. --json answers the tombstone and what was removed.
	p.must("", "user", "add", "carol", "--admin")
	var answer struct {
		Deleted      string              `json:"deleted"`
		User         models.User         `json:"user"`
		Removed      models.UserDeletion `json:"removed"`
		ErasePending bool                `json:"erase_pending"`
	}
	if err := json.Unmarshal([]byte(p.must("", "user", "delete", "admin", "--confirm", "admin", "--json")), &answer); err != nil {
		t.Fatal(err)
	}
	if answer.Deleted != "admin" || !strings.HasPrefix(answer.User.Username, "deleted-") || !answer.ErasePending {
		t.Errorf("delete --json: %+v", answer)
	}
	p.refused("", "cannot delete carol: it is the last administrator", "user", "delete", "carol", "--confirm", "carol")
}

// mustUser is the one account whose name starts with prefix and that was
// called old (the tombstone of a deleted account: its audit row says).
func mustUser(t *testing.T, s *models.Store, prefix, old string) *models.User {
	t.Helper()
	users, err := s.ListUsers(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	var found []models.User
	for _, u := range users {
		if strings.HasPrefix(u.Username, prefix) {
			found = append(found, u)
		}
	}
	if len(found) != 1 {
		t.Fatalf("accounts named %s…: %+v, want the one that was %s", prefix, found, old)
	}
	return &found[0]
}

// On a terminal `user delete NAME` without --confirm says what goes and
// asks for the name: a wrong answer deletes nothing, the right one
// deletes. The terminal is a real pseudo-terminal.
func TestUserDeleteAsksOnATerminal(t *testing.T) {
	p := newCLIPortal(t)
	p.must("", "user", "add", "dave")
	p.must("", "token", "create", "dave")

	ask := func(answer string) (string, string, error) {
		t.Helper()
		tty := openPTY(t)
		if _, err := tty.master.WriteString(answer + "\n"); err != nil {
			t.Fatal(err)
		}
		var out, errOut strings.Builder
		err := run(context.Background(), []string{"user", "delete", "dave", "--data-dir", p.dir}, tty.slave, &out, &errOut)
		return out.String(), errOut.String(), err
	}
	out, prompt, err := ask("dav")
	if err == nil || !strings.Contains(err.Error(), "the name typed is not dave; nothing was deleted") || out != "" {
		t.Fatalf("a wrong name typed: %v %q", err, out)
	}
	for _, want := range []string{"Deleting the account dave removes its home volume, with its files, and ends", "ends its sign-ins, 1 token and 0 SSH keys", "Type dave to delete it: "} {
		if !strings.Contains(prompt, want) {
			t.Errorf("the prompt %q lacks %q", prompt, want)
		}
	}
	if _, err := p.store().UserByUsername(context.Background(), "dave"); err != nil {
		t.Fatalf("dave after a wrong name typed: %v", err)
	}
	out, _, err = ask("dave")
	if err != nil || !strings.Contains(out, "deleted the account dave") {
		t.Fatalf("the right name typed: %v %q", err, out)
	}
	if n := p.audited("user.delete", "dave"); n != 1 {
		t.Errorf("%d deletions of dave audited, want 1", n)
	}
}

type pty struct{ master, slave *os.File }

// openPTY opens a pseudo-terminal pair (closed with the test): what a
// person at a shell is to the command.
func openPTY(t *testing.T) pty {
	t.Helper()
	master, err := os.OpenFile("/dev/ptmx", os.O_RDWR|unix.O_NOCTTY, 0)
	if err != nil {
		t.Skipf("no pseudo-terminals here: %v", err)
	}
	t.Cleanup(func() { master.Close() })
	unlock := 0
	if err := unix.IoctlSetPointerInt(int(master.Fd()), unix.TIOCSPTLCK, unlock); err != nil {
		t.Fatal(err)
	}
	n, err := unix.IoctlGetInt(int(master.Fd()), unix.TIOCGPTN)
	if err != nil {
		t.Fatal(err)
	}
	slave, err := os.OpenFile(fmt.Sprintf("/dev/pts/%d", n), os.O_RDWR|unix.O_NOCTTY, 0)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { slave.Close() })
	return pty{master: master, slave: slave}
}
