package proxy

import (
	"io"
	"net/http"
	"time"
)

// A request counts as activity when it arrives (ServeHTTP); a long one —
// a download of a large result, an upload sent in one body — counts again
// while its body moves, so that a transfer that lasts longer than the
// workbench's idle timeout is not cut by the idle culler half-way (a
// 1 GiB download at 1 MiB/s was stopped after the 2 minutes of its
// workbench's idle timeout). Jupyter does not count it either: its
// last_activity moves on API requests, not on /files/ downloads.
//
// As for WebSockets, a trickle does not count: transferBytes must have
// moved since the last report, so a stream that only sends heartbeats
// (an app's event stream left open in a tab) does not hold a workbench,
// and its GPUs, for ever. Reports come at most once per ActivityInterval.

// transferBytes is how much of a body must move before it counts again.
const transferBytes = 64 << 10

// transfer reports one body's progress as activity of workbench id. One
// goroutine uses it.
type transfer struct {
	p     *Proxy
	id    string
	last  time.Time // last report (the request's arrival counted already)
	moved int64     // bytes since the last report
}

// newTransfer returns nil when no activity is reported, or when a body of
// length n (-1: unknown) is too small to count again.
func (p *Proxy) newTransfer(id string, n int64) *transfer {
	if p.opts.OnActivity == nil || (n >= 0 && n < transferBytes) {
		return nil
	}
	return &transfer{p: p, id: id, last: time.Now()}
}

func (t *transfer) add(n int) {
	if t == nil || n <= 0 {
		return
	}
	t.moved += int64(n)
	if t.moved < transferBytes {
		return
	}
	now := time.Now()
	if now.Sub(t.last) < t.p.opts.ActivityInterval {
		return
	}
	t.last, t.moved = now, 0
	t.p.opts.OnActivity(t.id, now)
}

// transferBody is a request or response body that reports its progress.
type transferBody struct {
	io.ReadCloser
	t *transfer
}

func (b *transferBody) Read(p []byte) (int, error) {
	n, err := b.ReadCloser.Read(p)
	b.t.add(n)
	return n, err
}

// watchRequestBody makes r's body, if it is large or of unknown length,
// report its progress (the ReverseProxy path; the lean path takes only
// small bodies).
func (p *Proxy) watchRequestBody(r *http.Request, id string) {
	if r.Body == nil || r.Body == http.NoBody {
		return
	}
	if t := p.newTransfer(id, r.ContentLength); t != nil {
		r.Body = &transferBody{ReadCloser: r.Body, t: t}
	}
}

// watchResponseBody does the same for a response on the ReverseProxy
// path.
func (p *Proxy) watchResponseBody(res *http.Response, id string) {
	if res.Body == nil || res.Body == http.NoBody {
		return
	}
	if t := p.newTransfer(id, res.ContentLength); t != nil {
		res.Body = &transferBody{ReadCloser: res.Body, t: t}
	}
}
