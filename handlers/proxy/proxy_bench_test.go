package proxy

import (
	"bytes"
	"context"
	"io"
	"net/http"
	"slices"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/coder/websocket"
)

// latencies collects per-operation durations from parallel goroutines so
// that tail latency, which ns/op hides, can be reported.
type latencies struct {
	mu sync.Mutex
	d  []time.Duration
}

func (l *latencies) add(d []time.Duration) {
	l.mu.Lock()
	l.d = append(l.d, d...)
	l.mu.Unlock()
}

func (l *latencies) report(b *testing.B) {
	if len(l.d) == 0 {
		return
	}
	slices.Sort(l.d)
	q := func(p float64) float64 { return float64(l.d[int(p*float64(len(l.d)-1))].Nanoseconds()) }
	b.ReportMetric(q(0.50), "p50-ns")
	b.ReportMetric(q(0.99), "p99-ns")
}

func smallJSON() http.Handler {
	body := []byte(`{"version":"2.14.0"}`)
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "application/json")
		w.Write(body)
	})
}

func benchGET(b *testing.B, url string) {
	client := &http.Client{Transport: &http.Transport{MaxIdleConnsPerHost: 256}}
	defer client.CloseIdleConnections()
	var lat latencies
	b.ReportAllocs()
	b.ResetTimer()
	cpu0 := processCPU()
	b.RunParallel(func(pb *testing.PB) {
		var local []time.Duration
		for pb.Next() {
			start := time.Now()
			res, err := client.Get(url)
			if err != nil {
				b.Error(err)
				return
			}
			io.Copy(io.Discard, res.Body)
			res.Body.Close()
			if res.StatusCode != 200 {
				b.Errorf("status %d", res.StatusCode)
				return
			}
			local = append(local, time.Since(start))
		}
		lat.add(local)
	})
	b.StopTimer()
	// CPU time, not wall time, is what tells two proxies apart on a
	// busy machine; it includes the client's and the upstream's (the
	// same for both), so compare differences against BenchmarkDirect….
	b.ReportMetric(float64(processCPU()-cpu0)/float64(b.N), "cpu-ns/op")
	lat.report(b)
}

// processCPU is the user and system CPU time this process has used.
func processCPU() time.Duration {
	var ru syscall.Rusage
	if err := syscall.Getrusage(syscall.RUSAGE_SELF, &ru); err != nil {
		return 0
	}
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}

// largeBody answers 1 MiB of known length, like a static bundle.
func largeBody() http.Handler {
	body := bytes.Repeat([]byte("abcdefghijklmnopqrstuvwxyz"), (1<<20)/26+1)[:1<<20]
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "application/octet-stream")
		w.Write(body)
	})
}

// upstreamPaths are the proxy's two ways upstream, compared side by side:
// the lean path (the default) and httputil.ReverseProxy with Transport.
var upstreamPaths = []struct {
	name string
	rp   bool
}{{"lean", false}, {"reverseproxy", true}}

func BenchmarkProxyLargeGET(b *testing.B) {
	for _, up := range upstreamPaths {
		b.Run(up.name, func(b *testing.B) {
			f := newFixture(b, largeBody(), func(o *Options) {
				o.OnActivity = func(string, time.Time) {}
				o.ReverseProxyOnly = up.rp
			})
			benchGET(b, f.front.URL+"/wb/abc/api/large")
		})
	}
}

func BenchmarkDirectLargeGET(b *testing.B) {
	f := newFixture(b, largeBody(), nil)
	benchGET(b, f.up.URL+"/wb/abc/api/large")
}

// BenchmarkProxySmallGET proxies as the portal does: every request a
// user's, registered for revocation (Options.Live).
func BenchmarkProxySmallGET(b *testing.B) {
	for _, up := range upstreamPaths {
		b.Run(up.name, func(b *testing.B) {
			f := newFixture(b, smallJSON(), func(o *Options) {
				o.OnActivity = func(string, time.Time) {}
				o.ReverseProxyOnly = up.rp
				o.Live = NewLive()
				resolve := o.Resolve
				o.Resolve = func(r *http.Request, id string) (Target, error) {
					t, err := resolve(r, id)
					t.UserID, t.Grant = 7, "session-a"
					return t, err
				}
			})
			benchGET(b, f.front.URL+"/wb/abc/api/status")
		})
	}
}

func BenchmarkDirectSmallGET(b *testing.B) {
	f := newFixture(b, smallJSON(), nil)
	benchGET(b, f.up.URL+"/wb/abc/api/status")
}

func benchWSEcho(b *testing.B, url string, hdr http.Header) {
	msg := bytes.Repeat([]byte("x"), 64)
	var lat latencies
	b.ReportAllocs()
	b.ResetTimer()
	b.RunParallel(func(pb *testing.PB) {
		ctx := context.Background()
		c, _, err := websocket.Dial(ctx, url, &websocket.DialOptions{HTTPHeader: hdr})
		if err != nil {
			b.Error(err)
			return
		}
		defer c.CloseNow()
		var local []time.Duration
		for pb.Next() {
			start := time.Now()
			if err := c.Write(ctx, websocket.MessageBinary, msg); err != nil {
				b.Error(err)
				return
			}
			if _, _, err := c.Read(ctx); err != nil {
				b.Error(err)
				return
			}
			local = append(local, time.Since(start))
		}
		lat.add(local)
	})
	b.StopTimer()
	lat.report(b)
}

func BenchmarkProxyWebSocketEcho(b *testing.B) {
	f := newFixture(b, wsEcho(), func(o *Options) { o.OnActivity = func(string, time.Time) {} })
	benchWSEcho(b, wsURL(f.front.URL, "/wb/abc/api/kernels/k/channels"), http.Header{"Origin": {f.front.URL}})
}

func BenchmarkDirectWebSocketEcho(b *testing.B) {
	f := newFixture(b, wsEcho(), nil)
	benchWSEcho(b, wsURL(f.up.URL, "/wb/abc/api/kernels/k/channels"), nil)
}
