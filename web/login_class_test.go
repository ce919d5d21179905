package web_test

import (
	"context"
	"fmt"
	"net/http"
	"net/url"
	"strings"
	"testing"
	"time"

	"workbench/models"
	"workbench/web"
)

// TestLoginsOfAClassWaitForAHashSlot: a class logging in at the same moment
// from its one NAT address, more logins than the hash gate has slots, all
// get in (303) after a wait instead of 503 "busy". The test holds the gate
// until every login is waiting, so it does not depend on how fast the
// machine hashes. A login whose browser leaves while it waits gives its
// place up.
func TestLoginsOfAClassWaitForAHashSlot(t *testing.T) {
	p := newPortal(t, func(c *web.Config) { c.LoginMemoryMiB = 19 }) // one slot
	ctx := context.Background()
	const n = 8
	for i := range n {
		if _, err := p.srv.Store.CreateUser(ctx, models.NewUser{Username: fmt.Sprintf("student%d", i), Password: "class-password-1", Role: "user"}); err != nil {
			t.Fatal(err)
		}
	}
	release, err := p.srv.Store.HoldHashGate(ctx)
	if err != nil {
		t.Fatal(err)
	}
	defer func() {
		if release != nil {
			release()
		}
	}()

	// A browser that leaves while waiting.
	leaving, leave := context.WithCancel(ctx)
	left := make(chan error, 1)
	go func() {
		form := url.Values{"username": {"student0"}, "password": {"class-password-1"}}
		req, _ := http.NewRequestWithContext(leaving, http.MethodPost, p.ts.URL+"/login", strings.NewReader(form.Encode()))
		req.Header.Set("Content-Type", "application/x-www-form-urlencoded")
		req.Header.Set("Sec-Fetch-Site", "same-origin")
		req.Header.Set("Origin", p.ts.URL)
		res, err := p.clientFrom("127.0.3.1").Do(req)
		if err == nil {
			res.Body.Close()
		}
		left <- err
	}()
	waitHashWaiting(t, p, 1)
	leave()
	if err := <-left; err == nil {
		t.Fatal("the request that left got an answer")
	}
	waitHashWaiting(t, p, 0)

	codes := classLogins(t, p, "127.0.3.1", "student", n)
	waitHashWaiting(t, p, n)
	release()
	release = nil
	for range n {
		if code := <-codes; code != http.StatusSeeOther {
			t.Errorf("a student's login got %d, want 303", code)
		}
	}
}

// TestSudoWaitsForAHashSlot: confirming one's password (sudo) shares the
// hash gate with logins and waits for a slot too, instead of "busy".
func TestSudoWaitsForAHashSlot(t *testing.T) {
	p := newPortal(t, func(c *web.Config) { c.LoginMemoryMiB = 19 }) // one slot
	c := p.client()
	p.login(c, "admin", adminPassword)
	release, err := p.srv.Store.HoldHashGate(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	done := make(chan int, 1)
	go func() {
		res := p.postForm(c, "/sudo", url.Values{"sudo_password": {adminPassword}, "next": {"/"}})
		done <- res.StatusCode
	}()
	waitHashWaiting(t, p, 1)
	release()
	if code := <-done; code != http.StatusSeeOther {
		t.Fatalf("sudo after waiting: %d, want 303", code)
	}
}

// waitHashWaiting waits until want password checks wait for a slot.
func waitHashWaiting(t *testing.T, p *testPortal, want int64) {
	t.Helper()
	deadline := time.After(30 * time.Second)
	tick := time.NewTicker(2 * time.Millisecond)
	defer tick.Stop()
	for p.srv.Store.HashChecksWaiting() != want {
		select {
		case <-deadline:
			t.Fatalf("%d password checks waiting, want %d", p.srv.Store.HashChecksWaiting(), want)
		case <-tick.C:
		}
	}
}

// TestLoginsOfAClassPastTheAddressBudget: more students than the address's
// 20 free failures log in at the same moment from one NAT address, all
// with the right password, and all get in (303). Each attempt is counted
// as a failure until its password is checked, so the 21st on were told
// "Too many failed attempts" (429) for 30 s though nobody had failed; now
// they wait for the attempts ahead of them to settle. The gate is held
// until 20 checks wait, so the 10 others meet an address budget taken
// only by attempts in flight.
func TestLoginsOfAClassPastTheAddressBudget(t *testing.T) {
	p := newPortal(t)
	ctx := context.Background()
	const n, addressBudget = 30, 20
	for i := range n {
		if _, err := p.srv.Store.CreateUser(ctx, models.NewUser{Username: fmt.Sprintf("pupil%d", i), Password: "class-password-1", Role: "user"}); err != nil {
			t.Fatal(err)
		}
	}
	release, err := p.srv.Store.HoldHashGate(ctx)
	if err != nil {
		t.Fatal(err)
	}
	defer func() {
		if release != nil {
			release()
		}
	}()
	codes := classLogins(t, p, "127.0.3.2", "pupil", n)
	waitHashWaiting(t, p, addressBudget)
	release()
	release = nil
	got := map[int]int{}
	for range n {
		got[<-codes]++
	}
	if got[http.StatusSeeOther] != n {
		t.Fatalf("logins of a class of %d from one address: %v; want all 303", n, got)
	}
}

// classLogins logs in prefix0…prefix(n-1) with the class password, all at
// once from the address src, and returns a channel of their statuses.
func classLogins(t *testing.T, p *testPortal, src, prefix string, n int) <-chan int {
	t.Helper()
	codes := make(chan int, n)
	for i := range n {
		go func() {
			code, _, err := p.loginAttempt(p.clientFrom(src), fmt.Sprintf("%s%d", prefix, i), "class-password-1")
			if err != nil {
				t.Error(err)
			}
			codes <- code
		}()
	}
	return codes
}
