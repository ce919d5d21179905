package proxy

import (
	"context"
	"io"
	"net/http"
	"strconv"
	"testing"
	"time"
)

// TestStopEndsDownloads: CloseWorkbench (called when a workbench leaves the
// running state) ends a download from it at once, on both upstream paths,
// and leaves another workbench's alone. The upstream here stands for a
// stopped container whose network vanished: it sends part of the body and
// then nothing, never closing, as a connection whose end is lost does.
func TestStopEndsDownloads(t *testing.T) {
	for _, reverseProxyOnly := range []bool{false, true} {
		t.Run("reverseproxy="+strconv.FormatBool(reverseProxyOnly), func(t *testing.T) {
			live := NewLive()
			const part = 256 << 10
			release := make(chan struct{})
			defer close(release)
			f := newFixture(t, http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
				w.Header().Set("Content-Length", strconv.Itoa(4*part))
				w.Write(make([]byte, part))
				w.(http.Flusher).Flush()
				select {
				case <-release:
				case <-r.Context().Done():
				}
			}), func(o *Options) {
				o.Live = live
				o.ReverseProxyOnly = reverseProxyOnly
				resolve := o.Resolve
				o.Resolve = func(r *http.Request, id string) (Target, error) {
					t, err := resolve(r, id)
					t.UserID, t.Grant = 7, "session"
					return t, err
				}
			})
			ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
			defer cancel()
			get := func(id string) *http.Response {
				req, _ := http.NewRequestWithContext(ctx, "GET", f.front.URL+"/wb/"+id+"/files/big.bin", nil)
				res, err := http.DefaultClient.Do(req)
				if err != nil {
					t.Fatal(err)
				}
				if _, err := io.ReadFull(res.Body, make([]byte, part)); err != nil {
					t.Fatal(err)
				}
				return res
			}
			stopped, other := get("wb1"), get("wb2")
			defer stopped.Body.Close()
			defer other.Body.Close()
			if n := live.CloseWorkbench("wb1"); n != 1 {
				t.Fatalf("CloseWorkbench ended %d requests, want 1", n)
			}
			if _, err := io.ReadAll(stopped.Body); err == nil {
				t.Fatal("the stopped workbench's download ended as if complete")
			} else if ctx.Err() != nil {
				t.Fatal("the stopped workbench's download was not ended")
			}
			if n := live.Count(7); n != 1 {
				t.Fatalf("%d requests in flight after the stop, want the other workbench's 1", n)
			}
		})
	}
}
