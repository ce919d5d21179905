package proxy

import (
	"io"
	"net/http"
	"sync"
	"sync/atomic"
	"time"
)

// wrapUpgraded makes a tunnelled (WebSocket) connection report activity:
// once when it opens (ServeHTTP already did), while data flows in either
// direction at most once per ActivityInterval, and once when it closes.
// A Jupyter tab keeps a kernel WebSocket open for hours, so open/close
// alone would let a busy notebook look idle.
func (p *Proxy) wrapUpgraded(res *http.Response, id string) {
	rwc, ok := res.Body.(io.ReadWriteCloser)
	if !ok || p.opts.OnActivity == nil {
		return // ReverseProxy reports the non-writable body itself
	}
	c := &activityConn{ReadWriteCloser: rwc, id: id, p: p, every: p.opts.ActivityInterval.Nanoseconds()}
	c.last.Store(time.Now().UnixNano())
	res.Body = c
}

type activityConn struct {
	io.ReadWriteCloser
	id    string
	p     *Proxy
	every int64        // nanoseconds between reports
	last  atomic.Int64 // unix nanos of the last report
	once  sync.Once
}

// touch reports activity if the last report is older than every. The
// compare-and-swap keeps the two copy goroutines from both reporting.
func (c *activityConn) touch() {
	now := time.Now()
	last := c.last.Load()
	if now.UnixNano()-last < c.every || !c.last.CompareAndSwap(last, now.UnixNano()) {
		return
	}
	c.p.opts.OnActivity(c.id, now)
}

func (c *activityConn) Read(b []byte) (int, error) {
	n, err := c.ReadWriteCloser.Read(b)
	if n > 0 {
		c.touch()
	}
	return n, err
}

func (c *activityConn) Write(b []byte) (int, error) {
	n, err := c.ReadWriteCloser.Write(b)
	if n > 0 {
		c.touch()
	}
	return n, err
}

// CloseWrite is forwarded so ReverseProxy can still half-close the
// backend when the browser finishes sending.
func (c *activityConn) CloseWrite() error {
	if cw, ok := c.ReadWriteCloser.(interface{ CloseWrite() error }); ok {
		return cw.CloseWrite()
	}
	return http.ErrNotSupported
}

func (c *activityConn) Close() error {
	c.once.Do(func() { c.p.opts.OnActivity(c.id, time.Now()) })
	return c.ReadWriteCloser.Close()
}
