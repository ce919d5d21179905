package proxy

import (
	"bytes"
	"context"
	"io"
	"net/http"
	"strconv"
	"testing"
	"time"
)

// waitActivity waits until OnActivity was called at least n times, and
// says whether it was before the deadline.
func (f *fixture) waitActivity(n int, within time.Duration) bool {
	deadline := time.Now().Add(within)
	for f.activityCount() < n {
		if time.Now().After(deadline) {
			return false
		}
		time.Sleep(5 * time.Millisecond)
	}
	return true
}

// TestLongTransfersAreActivity: a download or upload counts as activity
// while its body moves, not only when the request arrives, so the idle
// culler does not stop a workbench in the middle of a long transfer. The
// upstream (or the client) holds the rest of the body back until the
// proxy has reported the part that moved: a proxy that counts only the
// request's arrival never does, and the test fails at its deadline.
func TestLongTransfersAreActivity(t *testing.T) {
	for _, mode := range []struct {
		name string
		opts func(*Options)
	}{
		{"lean", func(o *Options) { o.ActivityInterval = time.Nanosecond }},
		{"reverseproxy", func(o *Options) { o.ActivityInterval = time.Nanosecond; o.ReverseProxyOnly = true }},
	} {
		t.Run(mode.name, func(t *testing.T) {
			t.Run("download", func(t *testing.T) {
				const half = 256 << 10
				release := make(chan struct{})
				f := newFixture(t, http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
					w.Header().Set("Content-Length", strconv.Itoa(2*half))
					w.Write(make([]byte, half))
					w.(http.Flusher).Flush()
					select {
					case <-release:
					case <-r.Context().Done():
						return
					}
					w.Write(make([]byte, half))
				}), mode.opts)
				ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
				defer cancel()
				req, _ := http.NewRequestWithContext(ctx, "GET", f.front.URL+"/wb/abc/files/big.bin", nil)
				res, err := http.DefaultClient.Do(req)
				if err != nil {
					t.Fatal(err)
				}
				defer res.Body.Close()
				if _, err := io.ReadFull(res.Body, make([]byte, half)); err != nil {
					t.Fatal(err)
				}
				if !f.waitActivity(2, 5*time.Second) {
					t.Fatalf("a download that moved %d KiB reported activity %d time(s): only its arrival", half>>10, f.activityCount())
				}
				close(release)
				if n, err := io.Copy(io.Discard, res.Body); err != nil || n != half {
					t.Fatalf("rest of the download: %d %v", n, err)
				}
			})
			t.Run("upload", func(t *testing.T) {
				got := make(chan int64, 1)
				f := newFixture(t, http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
					n, _ := io.Copy(io.Discard, r.Body)
					got <- n
					w.WriteHeader(http.StatusCreated)
				}), mode.opts)
				pr, pw := io.Pipe()
				ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
				defer cancel()
				req, _ := http.NewRequestWithContext(ctx, "PUT", f.front.URL+"/wb/abc/api/contents/data.bin", pr)
				req.Header.Set("Origin", f.front.URL)
				done := make(chan error, 1)
				go func() {
					res, err := http.DefaultClient.Do(req)
					if err == nil {
						res.Body.Close()
					}
					done <- err
				}()
				const part = 256 << 10
				if _, err := pw.Write(make([]byte, part)); err != nil {
					t.Fatal(err)
				}
				if !f.waitActivity(2, 5*time.Second) {
					pw.CloseWithError(io.ErrUnexpectedEOF)
					t.Fatalf("an upload that sent %d KiB reported activity %d time(s): only its arrival", part>>10, f.activityCount())
				}
				pw.Write(make([]byte, part))
				pw.Close()
				if err := <-done; err != nil {
					t.Fatal(err)
				}
				if n := <-got; n != 2*part {
					t.Fatalf("upstream got %d bytes, want %d", n, 2*part)
				}
			})
			t.Run("a trickle is no transfer", func(t *testing.T) {
				// An event stream of heartbeats left open in a tab must
				// not hold the workbench: it moves far less than
				// transferBytes.
				f := newFixture(t, http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
					w.Header().Set("Content-Type", "text/event-stream")
					for range 50 {
						io.WriteString(w, ": heartbeat\n\n")
						w.(http.Flusher).Flush()
					}
				}), mode.opts)
				res, body := f.do("GET", "/wb/abc/api/events", nil, "")
				if res.StatusCode != http.StatusOK || !bytes.Contains([]byte(body), []byte("heartbeat")) {
					t.Fatalf("%d %q", res.StatusCode, body)
				}
				if n := f.activityCount(); n != 1 {
					t.Fatalf("a stream of heartbeats reported activity %d times, want 1 (its arrival)", n)
				}
			})
		})
	}
}
