package main

import (
	"bytes"
	"context"
	"encoding/json"
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"os"
	"os/user"
	"path/filepath"
	"strings"
	"testing"

	"workbench/models"
	"workbench/web"
)

func runCLI(t *testing.T, stdin string, args ...string) (string, string, error) {
	t.Helper()
	var out, errb bytes.Buffer
	err := run(context.Background(), args, strings.NewReader(stdin), &out, &errb)
	return out.String(), errb.String(), err
}

// portalData is a data directory with a portal's database in it, as the
// first `workbench serve` leaves it (CLI commands refuse a directory
// without one).
func portalData(t *testing.T) string {
	t.Helper()
	dir := t.TempDir()
	s, err := models.Open(context.Background(), dir, nil)
	if err != nil {
		t.Fatal(err)
	}
	s.Close()
	return dir
}

// TestCommandsRefuseADirectoryWithoutPortalData: a command pointed at a
// directory where no portal ever ran says so and creates nothing (a
// "backup" of a fresh empty database said it was copied and exited 0).
func TestCommandsRefuseADirectoryWithoutPortalData(t *testing.T) {
	dir := t.TempDir()
	for _, args := range [][]string{
		{"backup", filepath.Join(t.TempDir(), "b.db")},
		{"egress", "remove"},
		{"user", "add", "bob"},
		{"user", "rename", "admin", "root"},
		{"user", "delete", "admin", "--confirm", "admin"},
		{"token", "create", "admin"},
		{"ledger", "credit", "admin", "1", "--reason", "x"},
	} {
		_, _, err := runCLI(t, "", append(args, "--data-dir", dir)...)
		if err == nil || !strings.Contains(err.Error(), "no portal data in") {
			t.Errorf("%v on an empty directory: %v, want it refused", args, err)
		}
	}
	if entries, _ := os.ReadDir(dir); len(entries) != 0 {
		t.Errorf("the empty directory now holds %d entries", len(entries))
	}
}

// serving runs a portal on dir, as in production a server holds the data
// directory open while CLI commands use it; it stops when the test ends.
func serving(t *testing.T, dir, adminPassword string) *httptest.Server {
	t.Helper()
	cfg := web.Config{Addr: "127.0.0.1:0", DataDir: dir, GPUs: "none", AdminPassword: adminPassword, Currency: "USD", LogFormat: "text", LogLevel: "error"}
	if err := cfg.Validate(); err != nil {
		t.Fatal(err)
	}
	srv, err := web.NewServer(context.Background(), cfg, slog.New(slog.NewTextHandler(io.Discard, nil)), io.Discard)
	if err != nil {
		t.Fatal(err)
	}
	ts := httptest.NewServer(srv.Handler())
	t.Cleanup(func() { ts.Close(); srv.Close() })
	return ts
}

func TestUserAddAndTokenCreateWhileServing(t *testing.T) {
	dir := t.TempDir()
	ts := serving(t, dir, "admin-password-1")

	out, _, err := runCLI(t, "alice-password-1\n", "user", "add", "alice", "--admin", "--password-stdin", "--data-dir", dir)
	if err != nil || !strings.Contains(out, "added alice (admin)") || strings.Contains(out, "alice-password-1") {
		t.Fatalf("user add: %q %v", out, err)
	}
	if _, _, err := runCLI(t, "x\n", "user", "add", "bob", "--password-stdin", "--data-dir", dir); err == nil || !strings.Contains(err.Error(), "password") {
		t.Fatalf("short password accepted: %v", err)
	}
	// Nothing on standard input says so, not "must be at least 10 characters".
	if _, _, err := runCLI(t, "", "user", "add", "bob", "--password-stdin", "--data-dir", dir); err == nil || !strings.Contains(err.Error(), "no password on standard input") {
		t.Fatalf("empty standard input: %v, want it named", err)
	}
	// Refusals name what to change, as a sentence.
	for _, bad := range []struct {
		args []string
		want string
	}{
		{[]string{"user", "add", "alice"}, `the user name "alice" is already taken`},
		{[]string{"user", "add", "dave", "--email", "not-an-address"}, "--email is not a valid address"},
		{[]string{"user", "add", "Dave"}, `the user name "Dave": use 2–32 lowercase letters`},
	} {
		if _, _, err := runCLI(t, "", append(bad.args, "--data-dir", dir)...); err == nil || !strings.HasPrefix(err.Error(), bad.want) {
			t.Errorf("workbench %s: %v; want %q", strings.Join(bad.args, " "), err, bad.want)
		}
	}
	out, _, err = runCLI(t, "", "user", "add", "carol", "--data-dir", dir)
	if err != nil || !strings.Contains(out, "with password ") {
		t.Fatalf("generated password not printed: %q %v", out, err)
	}

	out, _, err = runCLI(t, "", "token", "create", "alice", "--data-dir", dir)
	if err != nil {
		t.Fatal(err)
	}
	token := strings.TrimSpace(out)
	if strings.Count(out, "\n") != 1 || !strings.HasPrefix(token, "wbt_") {
		t.Fatalf("token create must print the token alone: %q", out)
	}
	// The running server accepts the token the CLI just made.
	req, _ := http.NewRequest("GET", ts.URL+"/api/v1/me", nil)
	req.Header.Set("Authorization", "Bearer "+token)
	res, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	var me map[string]any
	json.NewDecoder(res.Body).Decode(&me)
	res.Body.Close()
	if res.StatusCode != 200 || me["username"] != "alice" || me["role"] != "admin" {
		t.Fatalf("server rejected CLI token: %d %v", res.StatusCode, me)
	}
	if _, _, err := runCLI(t, "", "token", "create", "nobody", "--data-dir", dir); err == nil {
		t.Fatal("token for unknown user")
	}

	backup := filepath.Join(t.TempDir(), "backup.db")
	if out, _, err := runCLI(t, "", "backup", backup, "--data-dir", dir); err != nil || !strings.Contains(out, backup) {
		t.Fatalf("backup: %q %v", out, err)
	}
	st, err := os.Stat(backup)
	if err != nil || st.Size() == 0 {
		t.Fatalf("backup file: %v", err)
	}
	if st.Mode().Perm() != 0o600 {
		t.Fatalf("backup file mode %v, want 0600: it holds password hashes and tokens", st.Mode().Perm())
	}
}

func TestGPUsJSONOnMock(t *testing.T) {
	out, _, err := runCLI(t, "", "gpus", "--json", "--gpus", "mock:dgxh200", "--data-dir", portalData(t))
	if err != nil {
		t.Fatal(err)
	}
	var inv struct {
		Items []struct {
			Index     int    `json:"index"`
			UUID      string `json:"uuid"`
			Model     string `json:"model"`
			MemoryMiB uint64 `json:"memory_mib"`
			State     string `json:"state"`
			Simulated bool   `json:"simulated"`
		} `json:"items"`
		Simulated bool `json:"simulated"`
	}
	if err := json.Unmarshal([]byte(out), &inv); err != nil {
		t.Fatalf("not JSON: %v\n%s", err, out)
	}
	if len(inv.Items) != 8 || !inv.Simulated {
		t.Fatalf("got %d GPUs, simulated=%v", len(inv.Items), inv.Simulated)
	}
	for i, g := range inv.Items {
		if g.Index != i || !strings.Contains(g.Model, "H200") || g.MemoryMiB < 140000 || !g.Simulated || g.State != "free" || !strings.HasPrefix(g.UUID, "GPU-") {
			t.Errorf("gpu %d: %+v", i, g)
		}
	}
}

func TestGPUsNoneIsEmptyNotSimulated(t *testing.T) {
	out, _, err := runCLI(t, "", "gpus", "--json", "--gpus", "none", "--data-dir", portalData(t))
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(out, `"items": []`) || !strings.Contains(out, `"simulated": false`) {
		t.Fatalf("none: %s", out)
	}
}

func TestInvalidConfigNamesTheSetting(t *testing.T) {
	cases := map[string][]string{
		"WORKBENCH_GPUS":       {"serve", "--gpus", "mock:dgx9000", "--data-dir", t.TempDir()},
		"WORKBENCH_ADDR":       {"serve", "--addr", "nonsense", "--data-dir", t.TempDir()},
		"WORKBENCH_CURRENCY":   {"serve", "--currency", "dollars", "--data-dir", t.TempDir()},
		"WORKBENCH_PUBLIC_URL": {"serve", "--public-url", "ftp://x", "--data-dir", t.TempDir()},
	}
	for setting, args := range cases {
		_, _, err := runCLI(t, "", args...)
		if err == nil || !strings.Contains(err.Error(), setting) || strings.Contains(err.Error(), "\n") {
			t.Errorf("%v: error %q should be one line naming %s", args, err, setting)
		}
	}
	t.Setenv("WORKBENCH_GPUS", "bogus")
	if _, _, err := runCLI(t, "", "serve", "--data-dir", t.TempDir()); err == nil || !strings.Contains(err.Error(), "WORKBENCH_GPUS") {
		t.Errorf("env GPUS=bogus: %v", err)
	}
}

func TestUnknownCommand(t *testing.T) {
	if _, errOut, err := runCLI(t, "", "frobnicate"); err == nil || !strings.Contains(errOut, "Usage") {
		t.Fatalf("unknown command: %v %q", err, errOut)
	}
}

// TestTokenCreateIsAuditedAndNamedUniquely: a token made on the command
// line leaves an audit row (never its secret); two made in the same
// second both succeed (the default name had one-second resolution); a
// lifetime past 3650 days is refused as in the portal (3,000,000 days
// wrapped round to 2056); the row names the OS user who ran it, and who
// ran sudo.
func TestTokenCreateIsAuditedAndNamedUniquely(t *testing.T) {
	t.Setenv("SUDO_USER", "alice-admin")
	dir := t.TempDir()
	serving(t, dir, "admin-password-1")
	first, _, err := runCLI(t, "", "token", "create", "admin", "--data-dir", dir)
	if err != nil {
		t.Fatal(err)
	}
	if _, _, err := runCLI(t, "", "token", "create", "admin", "--data-dir", dir); err != nil {
		t.Errorf("a second token in the same second: %v", err)
	}
	if _, _, err := runCLI(t, "", "token", "create", "admin", "--expires-days", "3000000", "--data-dir", dir); err == nil || !strings.Contains(err.Error(), "3650") {
		t.Errorf("--expires-days 3000000: %v, want it refused", err)
	}
	s, err := models.Open(context.Background(), dir, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	audit, _ := s.ListAudit(context.Background(), 10)
	n := 0
	for _, a := range audit {
		if a.Action == "token.create" && a.Actor == "cli" && a.Target == "admin" {
			n++
			if strings.Contains(a.After, strings.TrimSpace(first)) {
				t.Error("the audit row holds the token's secret")
			}
			// Who ran it: the OS user, and who ran sudo.
			if me, err := user.Current(); err != nil || a.Via != "command line as "+me.Username+", sudo by alice-admin" {
				t.Errorf("audit row via %q (%v)", a.Via, err)
			}
		}
	}
	if n != 2 {
		t.Errorf("%d token.create rows by cli, want 2", n)
	}
}

// TestHelpIsNotAFailure: `workbench <command> --help` prints the flags and
// exits 0 (it printed "workbench: flag: help requested" and exited 1); an
// error still exits 1 with its message.
func TestHelpIsNotAFailure(t *testing.T) {
	for _, args := range [][]string{{"backup", "--help"}, {"token", "create", "--help"}, {"serve", "-h"}} {
		_, errOut, err := runCLI(t, "", args...)
		var printed bytes.Buffer
		if code := exitCode(err, &printed); code != 0 || !strings.Contains(errOut, "-data-dir") || printed.Len() != 0 {
			t.Errorf("%v: exit %d, printed %q, flags %.60q; want exit 0 after the flags", args, code, printed.String(), errOut)
		}
	}
	_, _, err := runCLI(t, "", "backup")
	var printed bytes.Buffer
	if code := exitCode(err, &printed); code != 1 || !strings.HasPrefix(printed.String(), "workbench: ") {
		t.Errorf("backup without a file: exit %d, printed %q; want 1 with the message", code, printed.String())
	}
}

// `workbench GROUP --help` prints the group's usage and succeeds, as
// `workbench --help` does (it exited 1, an error to any script).
func TestGroupHelpSucceeds(t *testing.T) {
	for _, group := range []string{"user", "token", "image", "egress", "ledger", "queue"} {
		out, _, err := runCLI(t, "", group, "--help")
		if exitCode(err, io.Discard) != 0 || !strings.Contains(out, "usage: workbench "+group) {
			t.Errorf("workbench %s --help: %v, stdout %q", group, err, out)
		}
		if _, _, err := runCLI(t, "", group); exitCode(err, io.Discard) == 0 {
			t.Errorf("workbench %s without a subcommand succeeded", group)
		}
	}
}

// A word where a command takes none is refused, not read as the end of the
// options: `gpus extra --data-dir D` read the default data directory, and
// `serve extra --data-dir D` started a fresh install in ./data.
func TestCommandsWithoutArgumentsRefuseThem(t *testing.T) {
	dir := portalData(t)
	for _, args := range [][]string{
		{"gpus", "extra", "--gpus", "none", "--data-dir", dir},
		{"serve", "extra", "--data-dir", dir, "--addr", "127.0.0.1:0"},
		{"egress", "remove", "extra", "--data-dir", dir},
	} {
		_, _, err := runCLI(t, "", args...)
		if err == nil || !strings.Contains(err.Error(), `takes no arguments (got "extra")`) {
			t.Errorf("%v: %v, want the word refused", args, err)
		}
	}
	// Options after the command still work in any order.
	out, _, err := runCLI(t, "", "gpus", "--data-dir", dir, "--json", "--gpus", "none")
	if err != nil || !strings.Contains(out, `"items": []`) {
		t.Errorf("gpus with options only: %v\n%s", err, out)
	}
}

// `gpus --help` lists the settings it reads, not every serve flag; the
// others still apply from the environment.
func TestGPUsHelpListsItsOwnFlags(t *testing.T) {
	_, errOut, err := runCLI(t, "", "gpus", "--help")
	if exitCode(err, io.Discard) != 0 {
		t.Fatalf("gpus --help: %v", err)
	}
	for _, want := range []string{"-data-dir", "-gpus", "-json", "-utilisation", "-mock-mig"} {
		if !strings.Contains(errOut, want) {
			t.Errorf("gpus --help lacks %s:\n%s", want, errOut)
		}
	}
	for _, serveOnly := range []string{"-addr", "-oidc-issuer", "-ssh-addr", "-public-url"} {
		if strings.Contains(errOut, serveOnly+" ") || strings.Contains(errOut, serveOnly+"\n") {
			t.Errorf("gpus --help lists serve's %s:\n%s", serveOnly, errOut)
		}
	}
}

// `workbench user list` shows the accounts an operator has: who is an
// admin, who is disabled; --json too, without any secret.
func TestUserList(t *testing.T) {
	dir := portalData(t)
	if _, _, err := runCLI(t, "bob-password\n", "user", "add", "bob", "--password-stdin", "--data-dir", dir); err != nil {
		t.Fatal(err)
	}
	if _, _, err := runCLI(t, "", "user", "add", "root2", "--admin", "--data-dir", dir); err != nil {
		t.Fatal(err)
	}
	s, err := models.Open(context.Background(), dir, nil, models.WithoutMigrations())
	if err != nil {
		t.Fatal(err)
	}
	bob, _ := s.UserByUsername(context.Background(), "bob")
	if err := s.SetUserDisabled(context.Background(), bob.ID, true); err != nil {
		t.Fatal(err)
	}
	s.Close()
	out, _, err := runCLI(t, "", "user", "list", "--data-dir", dir)
	if err != nil {
		t.Fatal(err)
	}
	lines := strings.Split(strings.TrimSpace(out), "\n")
	if len(lines) != 3 || !strings.HasPrefix(lines[0], "USERNAME") {
		t.Fatalf("user list:\n%s", out)
	}
	if f := strings.Fields(lines[1]); f[0] != "bob" || f[1] != "user" || f[2] != "disabled" {
		t.Errorf("bob's line: %q", lines[1])
	}
	if f := strings.Fields(lines[2]); f[0] != "root2" || f[1] != "admin" || f[2] != "enabled" {
		t.Errorf("root2's line: %q", lines[2])
	}
	out, _, err = runCLI(t, "", "user", "list", "--json", "--data-dir", dir)
	if err != nil || !strings.Contains(out, `"username": "bob"`) || strings.Contains(strings.ToLower(out), "hash") || strings.Contains(out, "argon2") {
		t.Fatalf("user list --json (%v):\n%s", err, out)
	}
	if _, _, err := runCLI(t, "", "user", "list", "bob", "--data-dir", dir); err == nil {
		t.Error("user list with a word it does not take succeeded")
	}
}
