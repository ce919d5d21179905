package web_test

import (
	"context"
	"net/http"
	"strings"
	"testing"

	"workbench/models"
)

// An action that came through an API token names the token in the audit
// log, and a password sign-in is audited with its address: an admin
// reading the log after a leak can tell the token's doings from the
// owner's, and see where a password was used.
func TestAuditNamesTokenAndPasswordLogin(t *testing.T) {
	p := newPortal(t)
	ctx := context.Background()
	alice, err := p.srv.Store.CreateUser(ctx, models.NewUser{Username: "alice", Password: "alice-password-1", Role: "user"})
	if err != nil {
		t.Fatal(err)
	}
	tok, secret, err := p.srv.Store.CreateToken(ctx, alice.ID, "ci-bot", 0)
	if err != nil {
		t.Fatal(err)
	}
	key, _ := newAuthorizedKey(t, "ci")
	if code, body := p.api("POST", "/api/v1/ssh-keys", secret, jsonBody(map[string]string{"name": "ci", "public_key": key})); code != http.StatusCreated {
		t.Fatalf("add key with the token: %d %v", code, body)
	}

	c := p.client()
	p.login(c, "alice", "alice-password-1")
	// A credit through an admin's token: written by the ledger's own
	// transaction, its audit row names the token too.
	adminUser, _ := p.srv.Store.UserByUsername(ctx, "admin")
	adminTok, adminSecret, err := p.srv.Store.CreateToken(ctx, adminUser.ID, "billing-script", 0)
	if err != nil {
		t.Fatal(err)
	}
	if code, out := p.api("POST", "/api/v1/admin/ledger/credits", adminSecret, `{"user":"alice","amount_micros":1000000,"reason":"outage"}`); code != http.StatusCreated {
		t.Fatalf("credit: %d %v", code, out)
	}

	entries, err := p.srv.Store.ListAudit(ctx, 10)
	if err != nil {
		t.Fatal(err)
	}
	var sawKey, sawLogin, sawCredit bool
	for _, e := range entries {
		switch e.Action {
		case "ledger.credit":
			sawCredit = true
			if want := models.TokenVia(adminTok); e.Via != want {
				t.Errorf("ledger.credit via %q, want %q", e.Via, want)
			}
		case "ssh_key.create":
			sawKey = true
			if want := models.TokenVia(tok); e.Via != want || e.Actor != "alice" {
				t.Errorf("ssh_key.create: actor %q via %q; want alice via %q", e.Actor, e.Via, want)
			}
		case "session.login":
			sawLogin = true
			if e.Actor != "alice" || e.Via != "" || !strings.Contains(e.After, `"addr":"127.0.0.1"`) {
				t.Errorf("session.login: %+v; want alice, no token, the address", e)
			}
		}
	}
	if !sawKey || !sawLogin || !sawCredit {
		t.Fatalf("audit has ssh_key.create %v, session.login %v, ledger.credit %v: %+v", sawKey, sawLogin, sawCredit, entries)
	}

	admin := p.client()
	p.loginSudo(admin, "admin", adminPassword)
	res, body := p.get(admin, "/admin/audit?action=ssh_key.")
	if res.StatusCode != http.StatusOK {
		t.Fatalf("audit page: %d", res.StatusCode)
	}
	doc := parseHTML(t, body)
	if got := strings.TrimSpace(doc.Find(`[data-testid=audit-row] [data-testid=audit-via]`).First().Text()); got != "via token #"+itoa(tok.ID)+" ci-bot" {
		t.Errorf("audit page's via: %q", got)
	}
}
