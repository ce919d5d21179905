package main

// The "evloop" model: github.com/panjf2000/gnet/v2's event loops, nginx's
// own model. Each client connection is pinned to one upstream connection
// registered on the same event loop, so a request is read, checked and
// written on, and its answer copied back, by one thread in one epoll
// wake-up, with no goroutine hand-off at all.
//
// It is the most optimistic Go proxy there is, on purpose: GETs only
// (anything else gets 501), and answers are
// copied through as they come, only their framing parsed (the head's
// Content-Length, as a proxy must to know where an answer ends; chunked
// answers are not in this model). If even this cannot pass nginx here, no
// Go proxy can.

import (
	"bytes"
	"context"
	"log"
	"net"
	"strconv"

	"github.com/panjf2000/gnet/v2"
	"github.com/panjf2000/gnet/v2/pkg/logging"
)

type evPair struct {
	client, upstream gnet.Conn
	pending          []byte // request bytes written before the upstream connection opened
	bodyLeft         int    // bytes of the current answer's body still to come
}

type evProxy struct {
	gnet.BuiltinEventEngine
	upstream net.Addr
	sessions map[string]bool
}

var (
	crlf2       = []byte("\r\n\r\n")
	crlf        = []byte("\r\n")
	cookiePfx   = []byte("cookie:")
	sessionPfx  = []byte(cookieName + "=")
	wbPrefix    = []byte(" /wb/")
	notFound    = []byte("HTTP/1.1 404 Not Found\r\nContent-Length: 10\r\nContent-Type: text/plain\r\n\r\nnot found\n")
	notImpl     = []byte("HTTP/1.1 501 Not Implemented\r\nContent-Length: 0\r\nConnection: close\r\n\r\n")
	get         = []byte("GET ")
	contentLen  = []byte("content-length:")
	transferEnc = []byte("transfer-encoding:")
)

// runEvLoop serves on loops event loops (0: one per CPU, gnet's
// multicore). One loop leaves a core to the load client and the container
// on a 2-core machine, as one nginx worker would.
func runEvLoop(addr, upstream string, loops int) {
	up, err := net.ResolveTCPAddr("tcp", upstream)
	if err != nil {
		log.Fatal(err)
	}
	p := &evProxy{upstream: up, sessions: map[string]bool{"s3cret": true}}
	opts := []gnet.Option{gnet.WithMulticore(true), gnet.WithTCPNoDelay(gnet.TCPNoDelay), gnet.WithLogLevel(logging.ErrorLevel)}
	if loops > 0 {
		opts = append(opts, gnet.WithNumEventLoop(loops))
	}
	log.Fatal(gnet.Run(p, "tcp://"+addr, opts...))
}

func (p *evProxy) OnOpen(c gnet.Conn) ([]byte, gnet.Action) {
	if pair, ok := c.Context().(*evPair); ok { // the upstream side of a pair
		pair.upstream = c
		if len(pair.pending) > 0 {
			_, _ = c.Write(pair.pending)
			pair.pending = nil
		}
		return nil, gnet.None
	}
	pair := &evPair{client: c}
	c.SetContext(pair)
	if _, err := c.EventLoop().Register(gnet.NewContext(context.Background(), pair), p.upstream); err != nil {
		return nil, gnet.Close
	}
	return nil, gnet.None
}

func (p *evProxy) OnClose(c gnet.Conn, _ error) gnet.Action {
	pair, _ := c.Context().(*evPair)
	if pair == nil {
		return gnet.None
	}
	if c == pair.client && pair.upstream != nil {
		_ = pair.upstream.Close()
	} else if c == pair.upstream {
		_ = pair.client.Close()
	}
	return gnet.None
}

func (p *evProxy) OnTraffic(c gnet.Conn) gnet.Action {
	pair := c.Context().(*evPair)
	if c == pair.upstream {
		return p.answer(pair, c)
	}
	buf, _ := c.Peek(-1)
	used := 0
	var out []byte
	for {
		rest := buf[used:]
		end := bytes.Index(rest, crlf2)
		if end < 0 {
			break // wait for the rest of the head
		}
		head := rest[:end+4]
		used += end + 4
		fwd, reply := p.check(head)
		if reply != nil {
			if out != nil {
				p.send(pair, out)
				out = nil
			}
			_, _ = c.Write(reply)
			if bytes.Equal(reply, notImpl) {
				_, _ = c.Discard(used)
				return gnet.Close
			}
			continue
		}
		out = append(out, fwd...)
	}
	_, _ = c.Discard(used)
	if out != nil {
		p.send(pair, out)
	}
	return gnet.None
}

func (p *evProxy) send(pair *evPair, b []byte) {
	if pair.upstream == nil {
		pair.pending = append(pair.pending, b...)
		return
	}
	_, _ = pair.upstream.Write(b)
}

// check returns the head to send upstream (the session cookie dropped), or
// the answer to give the client instead.
func (p *evProxy) check(head []byte) (fwd, reply []byte) {
	line := bytes.IndexByte(head, '\n')
	if line < 0 || !bytes.HasPrefix(head, get) {
		return nil, notImpl
	}
	if !bytes.Contains(head[:line], wbPrefix) {
		return nil, notFound
	}
	authed := false
	cookieAt, cookieEnd := -1, -1
	for i := line + 1; i < len(head)-2; {
		j := bytes.Index(head[i:], crlf)
		if j < 0 {
			break
		}
		h := head[i : i+j]
		if len(h) > len(cookiePfx) && bytes.EqualFold(h[:len(cookiePfx)], cookiePfx) {
			cookieAt, cookieEnd = i, i+j+2
			for _, kv := range bytes.Split(h[len(cookiePfx):], []byte(";")) {
				kv = bytes.TrimSpace(kv)
				if bytes.HasPrefix(kv, sessionPfx) && p.sessions[string(kv[len(sessionPfx):])] {
					authed = true
				}
			}
		} else if (len(h) > len(contentLen) && bytes.EqualFold(h[:len(contentLen)], contentLen)) ||
			(len(h) > len(transferEnc) && bytes.EqualFold(h[:len(transferEnc)], transferEnc)) {
			return nil, notImpl // a body: not in this model
		}
		i += j + 2
	}
	if !authed {
		return nil, notFound
	}
	fwd = make([]byte, 0, len(head))
	fwd = append(fwd, head[:cookieAt]...)
	return append(fwd, head[cookieEnd:]...), nil
}

// answer copies the complete parts of answers from upstream to the client:
// whole heads (parsed for their Content-Length) and body bytes.
func (p *evProxy) answer(pair *evPair, c gnet.Conn) gnet.Action {
	buf, _ := c.Peek(-1)
	i := 0
	for i < len(buf) {
		if pair.bodyLeft > 0 {
			n := min(pair.bodyLeft, len(buf)-i)
			i += n
			pair.bodyLeft -= n
			continue
		}
		end := bytes.Index(buf[i:], crlf2)
		if end < 0 {
			break // wait for the rest of the head
		}
		n, ok := contentLength(buf[i : i+end+2])
		if !ok {
			return gnet.Close // chunked or unframed: not in this model
		}
		i += end + 4
		pair.bodyLeft = n
	}
	if i > 0 {
		_, _ = pair.client.Write(buf[:i])
		_, _ = c.Discard(i)
	}
	return gnet.None
}

// contentLength finds an answer head's Content-Length.
func contentLength(head []byte) (int, bool) {
	for line := range bytes.SplitSeq(head, crlf) {
		if len(line) > len(contentLen) && bytes.EqualFold(line[:len(contentLen)], contentLen) {
			n, err := strconv.Atoi(string(bytes.TrimSpace(line[len(contentLen):])))
			return n, err == nil && n >= 0
		}
	}
	if bytes.Contains(head[:bytes.IndexByte(head, '\n')+1], []byte(" 204 ")) ||
		bytes.Contains(head[:bytes.IndexByte(head, '\n')+1], []byte(" 304 ")) {
		return 0, true
	}
	return 0, false
}
