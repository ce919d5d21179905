package main

import (
	"context"
	"net/http"
	"net/url"
	"strings"
	"testing"

	"workbench/models"
)

// An operator who lost the only administrator's password sets a new one
// from the shell while the portal runs: the running portal logs the admin
// in with it at once, the old password and the admin's API token stop
// working (as after a reset on the users page), and the audit log says the
// CLI did it. Bad input is refused with the reason.
func TestUserPasswordFromTheShellWhileServing(t *testing.T) {
	dir := t.TempDir()
	ts := serving(t, dir, "lost-password-1")

	out, _, err := runCLI(t, "", "token", "create", "admin", "--data-dir", dir)
	if err != nil {
		t.Fatal(err)
	}
	token := strings.TrimSpace(out)
	me := func() int {
		req, _ := http.NewRequest(http.MethodGet, ts.URL+"/api/v1/me", nil)
		req.Header.Set("Authorization", "Bearer "+token)
		res, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		res.Body.Close()
		return res.StatusCode
	}
	if code := me(); code != http.StatusOK {
		t.Fatalf("the admin's token before: %d", code)
	}
	login := func(password string) int {
		req, _ := http.NewRequest(http.MethodPost, ts.URL+"/login", strings.NewReader(url.Values{"username": {"admin"}, "password": {password}}.Encode()))
		req.Header.Set("Content-Type", "application/x-www-form-urlencoded")
		req.Header.Set("Origin", ts.URL)
		res, err := (&http.Client{CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }}).Do(req)
		if err != nil {
			t.Fatal(err)
		}
		res.Body.Close()
		return res.StatusCode
	}

	for _, bad := range []struct {
		stdin string
		args  []string
		want  string
	}{
		{"short\n", []string{"user", "password", "admin", "--password-stdin"}, "the password"},
		{"", []string{"user", "password", "nobody"}, `user "nobody": not found`},
		{"", []string{"user", "password"}, "usage: workbench user password NAME"},
	} {
		if _, _, err := runCLI(t, bad.stdin, append(bad.args, "--data-dir", dir)...); err == nil || !strings.Contains(err.Error(), bad.want) {
			t.Errorf("workbench %s: %v; want %q", strings.Join(bad.args, " "), err, bad.want)
		}
	}
	if code := login("lost-password-1"); code != http.StatusSeeOther {
		t.Fatalf("a refused change altered the password: login %d", code)
	}

	out, _, err = runCLI(t, "found-password-2\n", "user", "password", "admin", "--password-stdin", "--data-dir", dir)
	// The admin had one token: "1 token", not "1 tokens".
	if err != nil || !strings.Contains(out, "password of admin set; their sessions and 1 token ended") || strings.Contains(out, "found-password-2") {
		t.Fatalf("user password: %q %v", out, err)
	}
	if code := login("found-password-2"); code != http.StatusSeeOther {
		t.Errorf("login with the new password: %d, want 303", code)
	}
	if code := login("lost-password-1"); code != http.StatusUnauthorized {
		t.Errorf("login with the old password: %d, want 401", code)
	}
	if code := me(); code != http.StatusUnauthorized {
		t.Errorf("the admin's API token after the reset: %d, want 401", code)
	}
	// Without --password-stdin a password is made and printed.
	out, _, err = runCLI(t, "", "user", "password", "admin", "--data-dir", dir)
	if err != nil || !strings.Contains(out, "password of admin set to ") {
		t.Fatalf("generated password: %q %v", out, err)
	}
	printed, _, _ := strings.Cut(strings.SplitN(out, " set to ", 2)[1], ";")
	if code := login(printed); code != http.StatusSeeOther {
		t.Errorf("login with the printed password: %d", code)
	}

	store, err := models.Open(context.Background(), dir, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer store.Close()
	entries, err := store.ListAudit(context.Background(), 20)
	if err != nil {
		t.Fatal(err)
	}
	resets := 0
	for _, e := range entries {
		if e.Actor == "cli" && e.Action == "user.reset_password" && e.Target == "admin" {
			resets++
		}
	}
	if resets != 2 {
		t.Errorf("%d CLI password resets audited, want 2", resets)
	}
}
