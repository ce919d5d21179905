package main

import (
	"fmt"
	"net/http"
	"net/http/httptest"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"sync"
	"testing"
	"time"
)

// TestPacedLoadArrivesAsAStream runs wrk with the script bench-load gives
// it for a fixed rate, against a server that records when each request
// arrives: the requests rotate over the sessions, come at about the rate
// asked for and not in bursts (hey's synchronised tickers sent "200 req/s"
// as 50 requests at once every quarter second), and parseWrk reads what wrk
// reported.
func TestPacedLoadArrivesAsAStream(t *testing.T) {
	if _, err := exec.LookPath("wrk"); err != nil {
		t.Skip("wrk is not installed (apt-get install wrk)")
	}
	var (
		mu       sync.Mutex
		arrivals []time.Time
		bySess   = map[string]int{}
		refused  int
	)
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		tok := r.Header.Get("Authorization")
		mu.Lock()
		arrivals = append(arrivals, time.Now())
		bySess[tok]++
		if tok == "Bearer s3" {
			refused++
		}
		mu.Unlock()
		switch {
		case r.URL.Path != "/usage":
			http.NotFound(w, r)
		case tok == "Bearer s3": // one session's answers are errors, to see wrk count them
			http.Error(w, "no", http.StatusInternalServerError)
		default:
			_, _ = w.Write([]byte("ok"))
		}
	}))
	defer srv.Close()

	const rate, conns, secs = 100, 50, 3
	headers := make([]string, 10)
	for i := range headers {
		headers[i] = fmt.Sprintf("Authorization: Bearer s%d", i)
	}
	script := filepath.Join(t.TempDir(), "load.lua")
	if err := os.WriteFile(script, []byte(loadScript("/usage", headers, 1000*float64(conns)/rate)), 0o600); err != nil {
		t.Fatal(err)
	}
	out, err := exec.Command("wrk", "-t", "1", "-c", fmt.Sprint(conns), "-d", fmt.Sprintf("%ds", secs), "--latency", "-s", script, srv.URL+"/usage").CombinedOutput()
	if err != nil {
		t.Fatalf("wrk: %v\n%s", err, out)
	}
	res := parseWrk(string(out))
	srv.CloseClientConnections()
	mu.Lock()
	defer mu.Unlock()

	// wrk counts the answers it read; the server may have answered up to one
	// more per connection as wrk stopped.
	if res.reqs == 0 || res.reqs > len(arrivals) || len(arrivals)-res.reqs > conns {
		t.Errorf("wrk reported %d requests, the server saw %d\n%s", res.reqs, len(arrivals), out)
	}
	if res.non2xx == 0 || res.non2xx > refused || refused-res.non2xx > conns {
		t.Errorf("wrk reported %d non-2xx answers, the server refused %d\n%s", res.non2xx, refused, out)
	}
	if res.perSec <= 0 || res.p50 <= 0 || res.p99 < res.p50 {
		t.Errorf("parsed %+v from\n%s", res, out)
	}
	for _, h := range headers {
		if tok := h[len("Authorization: "):]; bySess[tok] == 0 {
			t.Errorf("no request carried %q (seen: %v)", tok, bySess)
		}
	}
	// Paced: about rate×secs requests. Back to back, 50 connections send
	// thousands a second to this server.
	if n := len(arrivals); n < rate*secs/4 || n > 2*rate*secs {
		t.Errorf("%d requests in %d s at %d req/s asked", n, secs, rate)
	}
	// Not in bursts: a Poisson stream of 100 req/s puts 2 requests in a
	// 20 ms window on average, and 35 is far beyond chance. Synchronised
	// connections would send all 50 at once. (A server stalled for a third
	// of a second by a busy machine would see the requests that queued
	// meanwhile arrive together: the bound leaves room for that.)
	slices.SortFunc(arrivals, func(a, b time.Time) int { return a.Compare(b) })
	most, lo := 0, 0
	for hi := range arrivals {
		for arrivals[hi].Sub(arrivals[lo]) > 20*time.Millisecond {
			lo++
		}
		most = max(most, hi-lo+1)
	}
	if most > 35 {
		t.Errorf("%d requests arrived within 20 ms: the load comes in bursts", most)
	}
}
