package handlers

import (
	"context"
	"strconv"
	"sync"
	"testing"
	"time"
)

func TestLoginThrottleReservesBeforeTheCheck(t *testing.T) {
	now := time.Unix(1_700_000_000, 0)
	th := NewLoginThrottle(nil)
	th.now = func() time.Time { return now }

	// A burst of 200 concurrent attempts for one account from one address:
	// only the pair rule's free failures get through, however they interleave.
	var mu sync.Mutex
	granted := 0
	var wg sync.WaitGroup
	for i := 0; i < 200; i++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			if r, _ := th.Reserve("alice", "10.0.0.1"); r != nil {
				mu.Lock()
				granted++
				mu.Unlock()
				r.Failed()
			}
		}()
	}
	wg.Wait()
	if granted != th.pair.free {
		t.Fatalf("burst got %d attempts, want %d", granted, th.pair.free)
	}
	_, wait := th.Reserve("alice", "10.0.0.1")
	if wait != 30*time.Second {
		t.Fatalf("first delay %v, want 30s", wait)
	}
	// The real alice at her own address is not locked out.
	r, _ := th.Reserve("alice", "10.0.0.7")
	if r == nil {
		t.Fatal("alice refused from another address")
	}
	r.Succeeded()

	// The delay doubles with every further failure.
	now = now.Add(30 * time.Second)
	r, _ = th.Reserve("alice", "10.0.0.1")
	if r == nil {
		t.Fatal("refused after the delay passed")
	}
	r.Failed()
	if _, wait := th.Reserve("alice", "10.0.0.1"); wait != time.Minute {
		t.Fatalf("second delay %v, want 1m", wait)
	}
	now = now.Add(time.Minute)
	r, _ = th.Reserve("alice", "10.0.0.1")
	r.Failed()
	if _, wait := th.Reserve("alice", "10.0.0.1"); wait != 2*time.Minute {
		t.Fatalf("third delay %v, want 2m", wait)
	}
	// Cancel gives the reservation back (the password was never checked).
	now = now.Add(2 * time.Minute)
	r, _ = th.Reserve("alice", "10.0.0.1")
	r.Cancel()
	if _, wait := th.Reserve("alice", "10.0.0.1"); wait != 0 {
		t.Fatalf("cancelled attempt still counted: wait %v", wait)
	}
	// Forgotten after an hour without failures.
	now = now.Add(time.Hour)
	for i := 0; i < th.pair.free; i++ {
		if r, _ := th.Reserve("alice", "10.0.0.1"); r == nil {
			t.Fatalf("attempt %d refused an hour after the last failure", i)
		}
	}
}

func TestLoginThrottlePerAddressAcrossAccounts(t *testing.T) {
	now := time.Unix(1_700_000_000, 0)
	th := NewLoginThrottle(nil)
	th.now = func() time.Time { return now }
	users := 0
	for {
		r, _ := th.Reserve("user"+string(rune('a'+users)), "10.0.0.1")
		if r == nil {
			break
		}
		r.Failed()
		users++
	}
	if users != th.addr.free {
		t.Fatalf("address got %d guesses over many accounts, want %d", users, th.addr.free)
	}
	if r, _ := th.Reserve("usera", "10.0.0.2"); r == nil {
		t.Fatal("another address throttled by the first")
	}
}

func TestLoginThrottleAccountLockAndAdminClear(t *testing.T) {
	now := time.Unix(1_700_000_000, 0)
	th := NewLoginThrottle(nil)
	th.now = func() time.Time { return now }
	// A distributed attack: 100 addresses, one failure each.
	for i := 0; i < th.account.free; i++ {
		r, _ := th.Reserve("bob", "10.1."+strconv.Itoa(i/250)+"."+strconv.Itoa(i%250))
		if r == nil {
			t.Fatalf("attempt %d refused below the account lock", i)
		}
		r.Failed()
	}
	n, locked, delayed := th.AccountState("bob")
	if n != 100 || locked != 15*time.Minute || delayed != 0 {
		t.Fatalf("account state: %d failures, locked %v, delayed %v (one failure per address delays none)", n, locked, delayed)
	}
	if r, _ := th.Reserve("bob", "192.0.2.1"); r != nil {
		t.Fatal("locked account accepted an attempt")
	}
	if !th.ClearAccount("bob") {
		t.Fatal("clear found nothing")
	}
	if r, _ := th.Reserve("bob", "192.0.2.1"); r == nil {
		t.Fatal("still locked after an admin cleared it")
	}
}

// TestLoginThrottleAccountStateReportsAnAddressDelay: five wrong passwords
// from one address delay the account's next login there long before the
// account locks; the users page must be able to say so.
func TestLoginThrottleAccountStateReportsAnAddressDelay(t *testing.T) {
	now := time.Unix(1_700_000_000, 0)
	th := NewLoginThrottle(nil)
	th.now = func() time.Time { return now }
	for i := 0; i < th.pair.free; i++ {
		r, _ := th.Reserve("carol", "192.0.2.7")
		if r == nil {
			t.Fatalf("attempt %d refused", i)
		}
		r.Failed()
	}
	now = now.Add(10 * time.Second)
	n, locked, delayed := th.AccountState("carol")
	if n != 5 || locked != 0 || delayed != 20*time.Second {
		t.Fatalf("account state: %d failures, locked %v, delayed %v; want 5, 0, 20s", n, locked, delayed)
	}
	// Another account's delay is not carol's.
	if _, _, d := th.AccountState("carl"); d != 0 {
		t.Fatalf("carl delayed %v", d)
	}
	now = now.Add(30 * time.Second)
	if _, _, d := th.AccountState("carol"); d != 0 {
		t.Fatalf("delay still %v after it ran out", d)
	}
}

// A held-back attempt says what holds it: the address's delay (others'
// failures from it, any account) or the account's own. Someone behind a
// lab's NAT address who had typed nothing was told "Too many failed
// attempts" when the address's delay was the cause.
func TestLoginHoldSaysWhetherTheAddressOrTheAccountHoldsIt(t *testing.T) {
	now := time.Unix(1_700_000_000, 0)
	th := NewLoginThrottle(nil)
	th.now = func() time.Time { return now }
	for i := 0; i < th.addr.free; i++ {
		r, _ := th.Reserve("guess"+strconv.Itoa(i), "10.0.0.1")
		if r == nil {
			t.Fatalf("guess %d refused before the address's free failures were used", i)
		}
		r.Failed()
	}
	if r, hold := th.ReserveOrHold("bob", "10.0.0.1", false); r != nil || !hold.ByAddress || hold.Wait != 30*time.Second {
		t.Fatalf("bob at the guessed-from address: reserved %v, hold %+v; want the address's 30 s", r != nil, hold)
	}
	// Ada's own wrong passwords from her address hold her account there.
	for i := 0; i < th.pair.free; i++ {
		r, _ := th.Reserve("ada", "10.0.0.2")
		r.Failed()
	}
	if r, hold := th.ReserveOrHold("ada", "10.0.0.2", false); r != nil || hold.ByAddress || hold.Wait != 30*time.Second {
		t.Fatalf("ada after her own failures: reserved %v, hold %+v; want the account's 30 s", r != nil, hold)
	}
	// Both hold it: the longer wait is told.
	now = now.Add(20 * time.Second)
	th.keys[pairKey("carl", "10.0.0.1")] = &failureCount{n: th.pair.free + 2, last: now} // 2 min from now
	if _, hold := th.ReserveOrHold("carl", "10.0.0.1", false); hold.ByAddress || hold.Wait != 2*time.Minute {
		t.Fatalf("carl held by his account's 2 min and the address's 10 s: %+v", hold)
	}
	if _, hold := th.ReserveOrHold("dora", "10.0.0.1", false); !hold.ByAddress || hold.Wait != 10*time.Second {
		t.Fatalf("dora held by the address's 10 s: %+v", hold)
	}
}

// An attempt held back only by others still being checked waits for them
// (ReserveWaiting): when one of them turns out right, it goes in; when they
// all turn out wrong, it is refused with the address's real delay, so a
// burst gets no more checks than the free failures.
func TestReserveWaitingForAttemptsInFlight(t *testing.T) {
	now := time.Unix(1_700_000_000, 0)
	th := NewLoginThrottle(nil)
	th.now = func() time.Time { return now }
	ctx := context.Background()
	var inFlight []*LoginReservation
	for i := range th.addr.free {
		r, _ := th.Reserve("student"+strconv.Itoa(i), "10.0.0.1")
		if r == nil {
			t.Fatalf("attempt %d refused within the free failures", i+1)
		}
		inFlight = append(inFlight, r)
	}
	if r, hold := th.ReserveOrHold("late", "10.0.0.1", false); r != nil || !hold.Pending || !hold.ByAddress {
		t.Fatalf("with the budget taken by attempts in flight: %v %+v; want a pending hold by address", r, hold)
	}

	// One of them is right: the late attempt, waiting, goes in.
	got := make(chan *LoginReservation)
	go func() {
		r, _ := th.ReserveWaiting(ctx, "late", "10.0.0.1", false, time.Minute)
		got <- r
	}()
	inFlight[0].Succeeded()
	late := <-got
	if late == nil {
		t.Fatal("a waiting attempt was refused after one in flight succeeded")
	}
	inFlight[0] = late

	// All of them are wrong: the waiting one is refused, with the delay.
	type answer struct {
		r    *LoginReservation
		hold LoginHold
	}
	refused := make(chan answer)
	go func() {
		r, hold := th.ReserveWaiting(ctx, "later", "10.0.0.1", false, time.Minute)
		refused <- answer{r, hold}
	}()
	for _, r := range inFlight {
		r.Failed()
	}
	a := <-refused
	if a.r != nil || a.hold.Pending || a.hold.Wait != 30*time.Second || !a.hold.ByAddress {
		t.Fatalf("after %d wrong passwords from the address: %v %+v; want refused for 30 s by address", th.addr.free, a.r, a.hold)
	}

	// A wait ends with its context.
	cctx, cancel := context.WithCancel(ctx)
	cancel()
	th2 := NewLoginThrottle(nil)
	for i := range th2.addr.free {
		th2.Reserve("s"+strconv.Itoa(i), "10.0.0.2")
	}
	if r, hold := th2.ReserveWaiting(cctx, "x", "10.0.0.2", false, time.Minute); r != nil || !hold.Pending {
		t.Fatalf("a cancelled wait: %v %+v; want nil with the pending hold", r, hold)
	}
}
