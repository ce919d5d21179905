package proxy

import (
	"bufio"
	"context"
	"errors"
	"net"
	"sync"
	"time"
)

// upstreamPool keeps persistent HTTP/1.1 connections to the workbenches'
// Jupyter servers for the lean path (lean.go), per host (one host is one
// workbench). Unlike http.Transport it runs no goroutine per connection:
// a request writes and reads its connection itself, and an idle one just
// sits here. A connection the server closed while idle is found out by the
// next request that takes it (see lean.go for the retry rule); the sweep
// closes those left idle past idleTimeout.
type upstreamPool struct {
	dialer      net.Dialer
	maxIdle     int           // per host, as Transport's MaxIdleConnsPerHost
	idleTimeout time.Duration // as Transport's IdleConnTimeout
	// maxHeaderBytes bounds what a response head may take, as
	// Transport's MaxResponseHeaderBytes (same default): without it a
	// notebook could grow the portal's memory with one endless header.
	maxHeaderBytes int64

	mu       sync.Mutex
	hosts    map[string][]*upConn // idle connections, most recently used last
	sweeping bool                 // a sweep timer is pending
}

func newUpstreamPool() *upstreamPool {
	return &upstreamPool{
		dialer:         net.Dialer{Timeout: 5 * time.Second, KeepAlive: 30 * time.Second},
		maxIdle:        64,
		idleTimeout:    90 * time.Second,
		maxHeaderBytes: 10 << 20,
		hosts:          map[string][]*upConn{},
	}
}

// upConn is one upstream connection with its buffers. It reads through
// itself so that nread tells whether the server sent anything for the
// current request.
type upConn struct {
	conn      net.Conn
	host      string
	br        *bufio.Reader
	bw        *bufio.Writer
	nread     int64
	reused    bool      // served a request before
	idleSince time.Time // when it was last put back
	// While limited (a response head is being read), at most readLimit
	// more bytes are read.
	limited   bool
	readLimit int64
}

// errHeadTooLarge ends a response head past upstreamPool.maxHeaderBytes.
var errHeadTooLarge = errors.New("upstream response headers too large")

func (c *upConn) Read(p []byte) (int, error) {
	if c.limited {
		if c.readLimit <= 0 {
			return 0, errHeadTooLarge
		}
		if int64(len(p)) > c.readLimit {
			p = p[:c.readLimit]
		}
	}
	n, err := c.conn.Read(p)
	c.nread += int64(n)
	c.readLimit -= int64(n)
	return n, err
}

// get returns the most recently used idle connection to host, or nil.
func (p *upstreamPool) get(host string, now time.Time) *upConn {
	p.mu.Lock()
	idle := p.hosts[host]
	for len(idle) > 0 {
		c := idle[len(idle)-1]
		idle[len(idle)-1] = nil
		idle = idle[:len(idle)-1]
		if now.Sub(c.idleSince) <= p.idleTimeout {
			p.hosts[host] = idle
			p.mu.Unlock()
			c.reused = true
			return c
		}
		// The most recent one is stale, so all the older ones are too.
		for _, old := range idle {
			old.conn.Close()
		}
		c.conn.Close()
		idle = idle[:0]
	}
	delete(p.hosts, host)
	p.mu.Unlock()
	return nil
}

// dial opens a new connection to host.
func (p *upstreamPool) dial(ctx context.Context, host string) (*upConn, error) {
	conn, err := p.dialer.DialContext(ctx, "tcp", host)
	if err != nil {
		return nil, err
	}
	c := &upConn{conn: conn, host: host}
	c.br = bufio.NewReaderSize(c, 4096)
	c.bw = bufio.NewWriterSize(conn, 4096)
	return c, nil
}

// put makes c idle, or closes it when host already has maxIdle idle ones.
func (p *upstreamPool) put(c *upConn, now time.Time) {
	c.idleSince = now
	p.mu.Lock()
	idle := p.hosts[c.host]
	if len(idle) >= p.maxIdle {
		p.mu.Unlock()
		c.conn.Close()
		return
	}
	p.hosts[c.host] = append(idle, c)
	if !p.sweeping {
		p.sweeping = true
		time.AfterFunc(p.idleTimeout, p.sweep)
	}
	p.mu.Unlock()
}

// sweep closes the connections idle for longer than idleTimeout (a stopped
// workbench's are never asked for again) and runs again while any remain;
// with none idle no timer is pending.
func (p *upstreamPool) sweep() {
	now := time.Now()
	p.mu.Lock()
	defer p.mu.Unlock()
	for host, idle := range p.hosts {
		kept := idle[:0]
		for _, c := range idle {
			if now.Sub(c.idleSince) > p.idleTimeout {
				c.conn.Close()
				continue
			}
			kept = append(kept, c)
		}
		clear(idle[len(kept):])
		if len(kept) == 0 {
			delete(p.hosts, host)
		} else {
			p.hosts[host] = kept
		}
	}
	p.sweeping = len(p.hosts) > 0
	if p.sweeping {
		time.AfterFunc(p.idleTimeout/2, p.sweep)
	}
}

// idleCount is how many idle connections host has (tests).
func (p *upstreamPool) idleCount(host string) int {
	p.mu.Lock()
	defer p.mu.Unlock()
	return len(p.hosts[host])
}
