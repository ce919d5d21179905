package web_test

import (
	"context"
	"net/http"
	"strings"
	"testing"
	"time"
)

// A short-lived API token cannot make a token that outlives it: a token
// handed to a script for a day (or leaked) would otherwise mint a
// credential that never expires.
func TestAPITokenCannotOutliveItsMaker(t *testing.T) {
	p := newPortal(t)
	ctx := context.Background()
	tokenFor(t, p, "dana", "user")
	u, err := p.srv.Store.UserByUsername(ctx, "dana")
	if err != nil {
		t.Fatal(err)
	}
	_, short, err := p.srv.Store.CreateToken(ctx, u.ID, "for-a-day", 36*time.Hour)
	if err != nil {
		t.Fatal(err)
	}
	for _, body := range []string{`{"name": "forever", "expires_days": 0}`, `{"name": "longer", "expires_days": 2}`, `{"name": "default"}`} {
		code, out := p.api("POST", "/api/v1/tokens", short, body)
		e, _ := out["error"].(map[string]any)
		msg, _ := e["message"].(string)
		if code != http.StatusForbidden || errCode(out) != "token_outlives_caller" || !strings.Contains(msg, "expires_days may be at most 1") {
			t.Errorf("%s with a 36-hour token: %d %v; want 403 token_outlives_caller", body, code, out)
		}
	}
	if code, out := p.api("POST", "/api/v1/tokens", short, `{"name": "a-day", "expires_days": 1}`); code != http.StatusCreated {
		t.Errorf("a one-day token from a 36-hour one: %d %v; want 201", code, out)
	}
	// An SSH key never expires: an expiring token cannot add one (revoking
	// the token would have left a shell credential behind).
	const key = `{"name": "laptop", "public_key": "ssh-ed25519 AAAAC3NzaC1lZDI1NTE5AAAAIJDwmmrccY+gbQ6OX+6JC/QB7/J79rHn7z1bEiTiFK7p dana@laptop"}`
	if code, out := p.api("POST", "/api/v1/ssh-keys", short, key); code != http.StatusForbidden || errCode(out) != "token_outlives_caller" {
		t.Errorf("an SSH key with a 36-hour token: %d %v; want 403 token_outlives_caller", code, out)
	}
	if keys, _ := p.srv.Store.ListSSHKeys(ctx, u.ID); len(keys) != 0 {
		t.Errorf("the refused request added %d keys", len(keys))
	}
	// A token without expiry is bounded by nothing.
	long := tokenFor(t, p, "dana", "user")
	if code, out := p.api("POST", "/api/v1/tokens", long, `{"name": "lasting", "expires_days": 0}`); code != http.StatusCreated {
		t.Errorf("a lasting token from a lasting one: %d %v; want 201", code, out)
	}
	if code, out := p.api("POST", "/api/v1/ssh-keys", long, key); code != http.StatusCreated {
		t.Errorf("an SSH key with a lasting token: %d %v; want 201", code, out)
	}
}

// The Bearer scheme is matched without regard to case (RFC 9110 §11.1),
// and a 401 of the API names the scheme it wants.
func TestAPIBearerSchemeAnyCase(t *testing.T) {
	p := newPortal(t)
	tok := tokenFor(t, p, "erin", "user")
	for _, authz := range []string{"bearer " + tok, "BEARER " + tok, "Bearer  " + tok} {
		req, _ := http.NewRequest("GET", p.ts.URL+"/api/v1/me", nil)
		req.Header.Set("Authorization", authz)
		res, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		res.Body.Close()
		if res.StatusCode != http.StatusOK {
			t.Errorf("Authorization %q: %d, want 200", strings.Replace(authz, tok, "<token>", 1), res.StatusCode)
		}
	}
	req, _ := http.NewRequest("GET", p.ts.URL+"/api/v1/me", nil)
	res, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	res.Body.Close()
	if res.StatusCode != http.StatusUnauthorized || !strings.HasPrefix(res.Header.Get("WWW-Authenticate"), "Bearer ") {
		t.Errorf("no credentials: %d, WWW-Authenticate %q; want 401 naming Bearer", res.StatusCode, res.Header.Get("WWW-Authenticate"))
	}
}
