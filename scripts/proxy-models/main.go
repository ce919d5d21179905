// Command proxy-models measures how fast a minimal Go reverse proxy can be
// on this machine under each of two HTTP server models, to tell whether the
// portal's /wb/ proxy could reach nginx's throughput (issue 15 §5) by
// changing its HTTP library rather than its own code:
//
//   - std: net/http's server handing each request to a pooled
//     http.Transport (the model httputil.ReverseProxy uses);
//   - fast: github.com/valyala/fasthttp's server and HostClient (a
//     worker-pool server, no goroutine hand-off per request);
//   - evloop: github.com/panjf2000/gnet/v2's event loops, nginx's model
//     (evloop.go: one thread reads, checks and forwards a request and
//     copies its answer back in one epoll wake-up).
//
// Each does only what any authenticated proxy must: a path check and a
// session-cookie lookup, the cookie dropped before the request goes on.
// run.sh measures them against nginx and the container itself with wrk.
// It is a separate module so fasthttp and gnet never enter the portal's go.mod.
package main

import (
	"flag"
	"io"
	"log"
	"net/http"
	"strings"

	"github.com/valyala/fasthttp"
)

const cookieName = "wb_session"

func main() {
	mode := flag.String("mode", "fast", "fast, std or evloop")
	addr := flag.String("addr", "127.0.0.1:18080", "listen address")
	upstream := flag.String("upstream", "", "the container's host:port")
	loops := flag.Int("loops", 0, "evloop: event loops (0: one per CPU)")
	flag.Parse()
	if *upstream == "" {
		log.Fatal("-upstream is required")
	}
	sessions := map[string]bool{"s3cret": true}
	switch *mode {
	case "fast":
		hc := &fasthttp.HostClient{Addr: *upstream, MaxConns: 512, DisablePathNormalizing: true}
		srv := &fasthttp.Server{NoDefaultServerHeader: true, Handler: func(ctx *fasthttp.RequestCtx) {
			if !strings.HasPrefix(string(ctx.Path()), "/wb/") || !sessions[string(ctx.Request.Header.Cookie(cookieName))] {
				ctx.Error("not found", http.StatusNotFound)
				return
			}
			ctx.Request.Header.Del("Cookie")
			if err := hc.Do(&ctx.Request, &ctx.Response); err != nil {
				ctx.Error("bad gateway", http.StatusBadGateway)
			}
		}}
		log.Fatal(srv.ListenAndServe(*addr))
	case "std":
		tr := &http.Transport{MaxIdleConnsPerHost: 64, DisableCompression: true}
		log.Fatal(http.ListenAndServe(*addr, http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			c, err := r.Cookie(cookieName)
			if !strings.HasPrefix(r.URL.Path, "/wb/") || err != nil || !sessions[c.Value] {
				http.Error(w, "not found", http.StatusNotFound)
				return
			}
			out := r.Clone(r.Context())
			out.URL.Scheme, out.URL.Host, out.RequestURI = "http", *upstream, ""
			out.Header.Del("Cookie")
			resp, err := tr.RoundTrip(out)
			if err != nil {
				http.Error(w, "bad gateway", http.StatusBadGateway)
				return
			}
			defer resp.Body.Close()
			for k, v := range resp.Header {
				w.Header()[k] = v
			}
			w.WriteHeader(resp.StatusCode)
			_, _ = io.Copy(w, resp.Body)
		})))
	case "evloop":
		runEvLoop(*addr, *upstream, *loops)
	default:
		log.Fatalf("unknown -mode %q", *mode)
	}
}
