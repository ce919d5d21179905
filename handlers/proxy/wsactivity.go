package proxy

import (
	"io"
	"net/http"
	"strings"
	"sync"
	"time"
)

// wrapUpgraded makes a tunnelled (WebSocket) connection report activity:
// once when it opens (ServeHTTP already did), when the browser sends a
// message (at most once per ActivityInterval), and once when it closes.
//
// Only messages from the browser count: an execute request, a completion,
// keystrokes in a terminal. What Jupyter sends back is not the user's
// doing; a running kernel or terminal shows in Jupyter's own activity,
// which the culler reads. Pings and pongs are not activity either (see
// frameScanner). A tab left open keeps its kernel WebSocket for days, so
// counting every byte would keep the workbench, and its GPUs, for days.
func (p *Proxy) wrapUpgraded(res *http.Response, id string) {
	rwc, ok := res.Body.(io.ReadWriteCloser)
	if !ok || (p.opts.OnActivity == nil && p.opts.Metrics == nil) {
		return // ReverseProxy reports the non-writable body itself
	}
	c := &activityConn{ReadWriteCloser: rwc, id: id, p: p, every: p.opts.ActivityInterval, last: time.Now(),
		websocket: strings.EqualFold(res.Header.Get("Upgrade"), "websocket")}
	res.Body = c
}

type activityConn struct {
	io.ReadWriteCloser
	id    string
	p     *Proxy
	every time.Duration // between reports
	// last is the last report; only the client-to-backend copy (Write)
	// reads and sets it after the connection is wrapped.
	last time.Time
	once sync.Once
	// websocket: the tunnel carries WebSocket frames, so fromClient can
	// tell messages from control frames; any other protocol counts every
	// byte the client sends.
	websocket  bool
	fromClient frameScanner // only the client-to-backend copy touches it
}

// touch reports activity if the last report is older than every.
func (c *activityConn) touch() {
	if c.p.opts.OnActivity == nil {
		return
	}
	now := time.Now()
	if now.Sub(c.last) < c.every {
		return
	}
	c.last = now
	c.p.opts.OnActivity(c.id, now)
}

// Write carries what the client sends to the backend.
func (c *activityConn) Write(b []byte) (int, error) {
	n, err := c.ReadWriteCloser.Write(b)
	if m := c.p.opts.Metrics; m != nil {
		m.toWB.Add(float64(n))
	}
	if n > 0 && (!c.websocket || c.fromClient.scan(b[:n])) {
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

// Read carries what the backend sends to the client.
func (c *activityConn) Read(b []byte) (int, error) {
	n, err := c.ReadWriteCloser.Read(b)
	if m := c.p.opts.Metrics; m != nil {
		m.toClient.Add(float64(n))
	}
	return n, err
}

func (c *activityConn) Close() error {
	c.once.Do(func() {
		if c.p.opts.OnActivity != nil {
			c.p.opts.OnActivity(c.id, time.Now())
		}
	})
	return c.ReadWriteCloser.Close()
}
