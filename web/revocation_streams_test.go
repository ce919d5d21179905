package web_test

import (
	"context"
	"io"
	"net/http"
	"net/url"
	"testing"
	"time"
)

// openStream GETs a long-lived response (a followed log, an event stream)
// and returns a channel closed when the portal ends it. bearer "" uses c's
// session.
func openStream(t *testing.T, p *testPortal, c *http.Client, bearer, path string) <-chan struct{} {
	t.Helper()
	ctx, cancel := context.WithCancel(context.Background())
	t.Cleanup(cancel)
	req, _ := http.NewRequestWithContext(ctx, "GET", p.ts.URL+path, nil)
	if bearer != "" {
		req.Header.Set("Authorization", "Bearer "+bearer)
	}
	res, err := c.Do(req)
	if err != nil {
		t.Fatalf("open %s: %v", path, err)
	}
	if res.StatusCode != http.StatusOK {
		t.Fatalf("open %s: %d", path, res.StatusCode)
	}
	ended := make(chan struct{})
	go func() {
		defer close(ended)
		defer res.Body.Close()
		io.Copy(io.Discard, res.Body)
	}()
	return ended
}

// streamEnds fails unless the portal ends the stream within d (generous:
// without the revocation the stream stays open for good).
func streamEnds(t *testing.T, ended <-chan struct{}, d time.Duration, what string) {
	t.Helper()
	select {
	case <-ended:
	case <-time.After(d):
		t.Fatalf("%s: the stream is still open %v later", what, d)
	}
}

// A changed password, a revoked API token and a logout end what they
// authenticated that stays open: a session's notebook WebSocket (a stolen
// session kept a kernel running code after the owner changed her
// password), followed logs and event streams (they went on printing the
// container's log to a revoked token). Tokens outlive a password change,
// and so do their streams.
func TestRevocationEndsStreamsAndSessionsWebSockets(t *testing.T) {
	p, _ := enginePortal(t)
	tok := tokenFor(t, p, "alice", "user")
	other := tokenFor(t, p, "alice", "user")
	code, wb := p.api("POST", "/api/v1/workbenches", tok, `{"name":"nb","image":"fake","flavor":"CPU small"}`)
	if code != 202 {
		t.Fatalf("launch: %d %v", code, wb)
	}
	id := wb["id"].(string)
	waitState(t, p, tok, id, "running")
	logs := "/api/v1/workbenches/" + id + "/logs?follow=true&tail=1"
	events := "/api/v1/workbenches/" + id + "/events"

	// A stolen session (thief) and the owner's own browser (owner).
	thief, owner := p.client(), p.client()
	p.login(thief, "alice", "alice-password")
	p.login(owner, "alice", "alice-password")
	ws := openNotebookWS(t, p, thief, id)
	thiefLogs := openStream(t, p, thief, "", logs)
	thiefEvents := openStream(t, p, thief, "", events)
	tokenLogs := openStream(t, p, http.DefaultClient, tok, logs)
	res := p.postForm(owner, "/settings/password", url.Values{"current_password": {"alice-password"},
		"new_password": {"alice-password-2"}, "new_password_again": {"alice-password-2"}})
	if res.StatusCode != http.StatusSeeOther {
		t.Fatalf("change the password: %d", res.StatusCode)
	}
	assertWSClosedWithin(t, ws, 10*time.Second, "password change")
	streamEnds(t, thiefLogs, 10*time.Second, "the session's followed log after a password change")
	streamEnds(t, thiefEvents, 10*time.Second, "the session's event stream after a password change")
	select {
	case <-tokenLogs:
		t.Fatal("a password change ended an API token's followed log (tokens keep working)")
	default:
	}

	// Revoking the token ends its stream.
	_, list := p.api("GET", "/api/v1/tokens", other, "")
	var tokID string
	for _, it := range list["items"].([]any) {
		m := it.(map[string]any)
		if m["prefix"] == tok[:len(m["prefix"].(string))] {
			tokID = itoa(int64(m["id"].(float64)))
		}
	}
	if code, out := p.api("DELETE", "/api/v1/tokens/"+tokID, other, ""); code != http.StatusNoContent {
		t.Fatalf("revoke the token %q: %d %v", tokID, code, out)
	}
	streamEnds(t, tokenLogs, 10*time.Second, "a revoked token's followed log")

	// Logging out ends that session's streams.
	owner = p.client()
	p.login(owner, "alice", "alice-password-2")
	ownerEvents := openStream(t, p, owner, "", events)
	p.postForm(owner, "/logout", nil)
	streamEnds(t, ownerEvents, 10*time.Second, "the event stream after logout")
	p.srv.Manager.Wait()
}
