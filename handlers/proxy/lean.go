package proxy

import (
	"context"
	"errors"
	"io"
	"mime"
	"net"
	"net/http"
	"strconv"
	"strings"
	"sync"
	"time"
)

// The lean path: plain HTTP/1.1 requests go upstream over upstreamPool's
// persistent connections, the request line and headers written straight
// from the client's request and the response read on the same goroutine.
// httputil.ReverseProxy with http.Transport, which serves everything else
// (WebSocket and other upgrades, request bodies of unknown or large
// length, Expect: 100-continue, trailers), clones the request and its
// headers and hands each connection to two goroutines of its own; for a
// small response that was most of what the portal spent per request
// (issue 15 §5).
//
// What reaches Jupyter and the browser is what the ReverseProxy path
// sends: the same headers removed, replaced and added (rewrite.go,
// response.go), the same flushing, the same errors.

// maxLeanBody is the largest request body the lean path sends. It writes
// the body before it reads the answer, so a server that answers early
// without reading a large body would leave it blocked; a small one fits in
// the socket's buffers. Bigger uploads take the ReverseProxy path, which
// writes and reads at once.
const maxLeanBody = 64 << 10

// leanOK reports whether r can take the lean path.
func (p *Proxy) leanOK(r *http.Request) bool {
	if p.pool == nil || r.ContentLength < 0 || r.ContentLength > maxLeanBody || r.URL.Opaque != "" {
		return false
	}
	h := r.Header
	// Upgrades, 100-continue and trailers need the Transport; isUpgrade
	// was asked already, but any Upgrade header at all goes the old way.
	if len(h["Upgrade"]) > 0 || len(h["Expect"]) > 0 || len(h["Te"]) > 0 || len(h["Trailer"]) > 0 {
		return false
	}
	switch r.Method {
	case http.MethodConnect, "PRI":
		return false
	}
	return cleanQuery(r.URL.RawQuery)
}

// cleanQuery reports whether ReverseProxy would forward the query as it
// is: it re-encodes queries with semicolons, bad escapes or too many
// parameters (cleanQueryParams), and those take its path.
func cleanQuery(s string) bool {
	if strings.Count(s, "&") >= 10000 {
		return false
	}
	for i := 0; i < len(s); {
		switch s[i] {
		case ';':
			return false
		case '%':
			if i+2 >= len(s) || !isHex(s[i+1]) || !isHex(s[i+2]) {
				return false
			}
			i += 3
		default:
			i++
		}
	}
	return true
}

func isHex(c byte) bool {
	return '0' <= c && c <= '9' || 'a' <= c && c <= 'f' || 'A' <= c && c <= 'F'
}

// idempotent requests without a body may be sent again on a new
// connection when a reused one turns out to be closed (as Transport does).
func idempotent(r *http.Request) bool {
	if r.ContentLength != 0 {
		return false
	}
	switch r.Method {
	case http.MethodGet, http.MethodHead, http.MethodOptions, http.MethodTrace:
		return true
	}
	return len(r.Header["Idempotency-Key"]) > 0 || len(r.Header["X-Idempotency-Key"]) > 0
}

// max1xx bounds the informational answers (103 Early Hints) forwarded
// before the final one; Jupyter sends none.
const max1xx = 5

// errUnexpected101 is a 101 answer to a request that asked for no upgrade.
var errUnexpected101 = errors.New("upstream switched protocols unasked")

// serveLean proxies r over a pooled connection; started is when it was
// authenticated (for Options.Live).
func (p *Proxy) serveLean(w http.ResponseWriter, r *http.Request, started time.Time, ri *reqInfo) {
	// The client going away or revocation ends the exchange: the upstream
	// connection is closed under the blocked read or write. One watcher
	// on r's context and one Live entry serve every attempt, with no
	// context of the exchange's own (the ReverseProxy path needs one:
	// cancelling it is how Transport is stopped).
	x := &exchange{}
	end := x.end
	stopWatch := context.AfterFunc(r.Context(), end)
	defer stopWatch()
	if p.opts.Live != nil && ri.target.UserID != 0 {
		defer p.opts.Live.add(ri.target.UserID, ri.target.Grant, ri.id, started, end)()
	}

	host := ri.target.BaseURL.Host
	now := time.Now()
	c := p.pool.get(host, now)
	if c != nil && !idempotent(r) {
		// This request cannot be sent twice, so it must not go out on
		// a connection the server has closed meanwhile.
		for c != nil && !c.alive() {
			c.conn.Close()
			c = p.pool.get(host, now)
		}
	}
	for {
		var err error
		if c == nil {
			if c, err = p.pool.dial(r.Context(), host); err != nil {
				p.upstreamError(w, r, ri, err, x.ended() || ClientGone(r, err))
				return
			}
		}
		if !x.use(c.conn) {
			c.conn.Close()
			p.upstreamError(w, r, ri, context.Canceled, true)
			return
		}
		res, err := p.roundTrip(c, w, r, ri)
		if err == nil {
			p.writeResponse(w, r, x, ri, c, res)
			return
		}
		x.release()
		c.conn.Close()
		gone := x.ended() || ClientGone(r, err)
		// A reused connection that failed before the server sent a
		// byte was most likely closed while idle: an idempotent
		// request goes again on a new one, once.
		if c.reused && c.nread == 0 && !gone && idempotent(r) && !errors.Is(err, errUnexpected101) {
			c = nil
			continue
		}
		p.upstreamError(w, r, ri, err, gone)
		return
	}
}

// exchange is one lean request's hold on its upstream connection, so that
// ending it (client gone, revocation) closes whichever is in use.
type exchange struct {
	mu   sync.Mutex
	conn net.Conn // in use; nil between attempts
	done bool
}

// end ends the exchange for good.
func (x *exchange) end() {
	x.mu.Lock()
	x.done = true
	c := x.conn
	x.mu.Unlock()
	if c != nil {
		c.Close()
	}
}

func (x *exchange) ended() bool {
	x.mu.Lock()
	defer x.mu.Unlock()
	return x.done
}

// use makes c the connection in use; false if the exchange has ended.
func (x *exchange) use(c net.Conn) bool {
	x.mu.Lock()
	defer x.mu.Unlock()
	x.conn = c
	return !x.done
}

// release lets go of the connection in use; false if the exchange ended
// (the connection is closed, or about to be).
func (x *exchange) release() bool {
	x.mu.Lock()
	defer x.mu.Unlock()
	x.conn = nil
	return !x.done
}

// roundTrip writes r upstream on c and reads the response head. 1xx
// answers other than 101 are forwarded to the client on the way.
func (p *Proxy) roundTrip(c *upConn, w http.ResponseWriter, r *http.Request, ri *reqInfo) (*http.Response, error) {
	c.nread = 0
	if err := p.writeRequest(c, r, ri); err != nil {
		return nil, err
	}
	// The head is read under a size limit, as Transport does; each
	// forwarded 1xx starts it afresh, and at most max1xx are taken.
	c.limited = true
	defer func() { c.limited = false }()
	for n1xx := 0; ; n1xx++ {
		c.readLimit = p.pool.maxHeaderBytes
		res, err := http.ReadResponse(c.br, r)
		if err != nil {
			return nil, err
		}
		if res.StatusCode >= 200 {
			return res, nil
		}
		if res.StatusCode == http.StatusSwitchingProtocols {
			return nil, errUnexpected101
		}
		if n1xx == max1xx {
			return nil, errors.New("upstream sent too many 1xx responses")
		}
		forward1xx(w, res)
	}
}

// writeRequest writes r's request line, headers and body on c: what
// rewrite and ReverseProxy would make of it, without copying the header
// map.
func (p *Proxy) writeRequest(c *upConn, r *http.Request, ri *reqInfo) error {
	bw := c.bw
	bw.WriteString(r.Method)
	bw.WriteByte(' ')
	u := *r.URL
	if pre := ri.target.StripPrefix; pre != "" {
		u.Path = "/" + strings.TrimPrefix(strings.TrimPrefix(u.Path, pre), "/")
		if u.RawPath != "" {
			u.RawPath = "/" + strings.TrimPrefix(strings.TrimPrefix(u.RawPath, pre), "/")
		}
	}
	if ri.scoped {
		stripScopedQuery(&u, p.opts.ScopedTokenPrefix)
	}
	path := u.EscapedPath()
	if path == "" {
		path = "/"
	}
	bw.WriteString(path)
	if u.ForceQuery || u.RawQuery != "" {
		bw.WriteByte('?')
		bw.WriteString(u.RawQuery)
	}
	bw.WriteString(" HTTP/1.1\r\nHost: ")
	// The portal's Host, as in rewrite.
	if r.Host != "" {
		bw.WriteString(r.Host)
	} else {
		bw.WriteString(ri.target.BaseURL.Host)
	}
	bw.WriteString("\r\n")

	h := r.Header
	conn := h["Connection"]
	for k, vv := range h {
		if skipRequestHeader(k) || connectionListed(conn, k) {
			continue
		}
		if k == "Referer" && len(vv) > 0 {
			if ref, changed := scopedReferer(vv[0], p.opts.ScopedTokenPrefix); changed {
				if ref != "" {
					writeHeader(bw, k, ref)
				}
				continue
			}
		}
		if k == "User-Agent" {
			// Transport sends only the first.
			if len(vv) > 0 {
				writeHeader(bw, k, vv[0])
			}
			continue
		}
		for _, v := range vv {
			writeHeader(bw, k, v)
		}
	}
	if name := p.opts.SessionCookieName; name == "" {
		for _, v := range h["Cookie"] {
			writeHeader(bw, "Cookie", v)
		}
	} else if ck, ok := keptCookies(h["Cookie"], name, p.opts.StateCookieName); ok {
		writeHeader(bw, "Cookie", ck)
	}
	if ri.target.Token != "" {
		bw.WriteString("Authorization: token ")
		bw.WriteString(ri.target.Token)
		bw.WriteString("\r\n")
	}
	// What ProxyRequest.SetXForwarded sets.
	if ip, _, err := net.SplitHostPort(r.RemoteAddr); err == nil {
		writeHeader(bw, "X-Forwarded-For", ip)
	}
	writeHeader(bw, "X-Forwarded-Host", r.Host)
	if r.TLS != nil {
		writeHeader(bw, "X-Forwarded-Proto", "https")
	} else {
		writeHeader(bw, "X-Forwarded-Proto", "http")
	}
	// Content-Length as Transport sends it.
	switch {
	case r.ContentLength > 0:
		bw.WriteString("Content-Length: ")
		bw.WriteString(strconv.FormatInt(r.ContentLength, 10))
		bw.WriteString("\r\n")
	case r.Method == http.MethodPost || r.Method == http.MethodPut || r.Method == http.MethodPatch:
		bw.WriteString("Content-Length: 0\r\n")
	}
	bw.WriteString("\r\n")
	if r.ContentLength > 0 {
		if _, err := io.CopyN(bw, r.Body, r.ContentLength); err != nil {
			return err
		}
	}
	return bw.Flush()
}

func writeHeader(bw interface{ WriteString(string) (int, error) }, k, v string) {
	bw.WriteString(k)
	bw.WriteString(": ")
	bw.WriteString(v)
	bw.WriteString("\r\n")
}

// skipRequestHeader: hop-by-hop headers (removeHopByHopHeaders), those
// written separately (Host, Content-Length, Cookie, Authorization) and
// what the client claims about the forwarding (rewrite).
func skipRequestHeader(k string) bool {
	switch k {
	case "Connection", "Proxy-Connection", "Keep-Alive", "Proxy-Authenticate", "Proxy-Authorization",
		"Te", "Trailer", "Transfer-Encoding", "Upgrade",
		"Host", "Content-Length", "Cookie", "Authorization", "Forwarded", "X-Real-Ip":
		return true
	}
	return strings.HasPrefix(k, "X-Forwarded-")
}

// connectionListed reports whether the Connection header names k (RFC
// 7230 §6.1: such headers are for this hop only).
func connectionListed(conn []string, k string) bool {
	for _, f := range conn {
		for sf := range strings.SplitSeq(f, ",") {
			if sf = strings.TrimSpace(sf); sf != "" && strings.EqualFold(sf, k) {
				return true
			}
		}
	}
	return false
}

// forward1xx sends an informational answer (103 Early Hints) to the
// client as ReverseProxy does, with the portal's guarded headers removed,
// keeping the headers already set for the final answer.
func forward1xx(w http.ResponseWriter, res *http.Response) {
	h := w.Header()
	saved := h.Clone()
	for k, vv := range res.Header {
		h[k] = append(h[k], vv...)
	}
	stripUpstreamHeaders(h)
	w.WriteHeader(res.StatusCode)
	clear(h)
	for k, vv := range saved {
		h[k] = vv
	}
}

// writeResponse sends res to the client and puts c back in the pool when
// the body was read to its end and the server keeps the connection open.
func (p *Proxy) writeResponse(w http.ResponseWriter, r *http.Request, x *exchange, ri *reqInfo, c *upConn, res *http.Response) {
	removeResponseHopHeaders(res.Header)
	// As modifyResponse does on the ReverseProxy path.
	guardResponseHeaders(res.Header, ri.scoped)
	res.Header.Set("X-Content-Type-Options", "nosniff")

	dst := w.Header()
	for k, vv := range res.Header {
		if old, ok := dst[k]; ok {
			dst[k] = append(old, vv...)
		} else {
			dst[k] = vv
		}
	}
	announced := len(res.Trailer)
	if announced > 0 {
		keys := make([]string, 0, announced)
		for k := range res.Trailer {
			keys = append(keys, k)
		}
		dst.Add("Trailer", strings.Join(keys, ", "))
	}
	w.WriteHeader(res.StatusCode)

	flush := res.ContentLength == -1 || isEventStream(res.Header.Get("Content-Type"))
	werr, rerr := p.copyBody(w, res.Body, flush, p.newTransfer(ri.id, res.ContentLength))
	if werr != nil || rerr != nil {
		gone := !x.release() || r.Context().Err() != nil
		c.conn.Close()
		if rerr != nil && !gone {
			p.rp.ErrorLog.Printf("httputil: ReverseProxy read error during body copy: %v", rerr)
		}
		// The answer is cut short; all the server can do is end the
		// connection (ReverseProxy does the same).
		panic(http.ErrAbortHandler)
	}
	res.Body.Close() // the body is at its end: this fills res.Trailer
	if x.release() && !res.Close && c.br.Buffered() == 0 {
		p.pool.put(c, time.Now())
	} else {
		c.conn.Close()
	}

	if len(res.Trailer) > 0 {
		http.NewResponseController(w).Flush()
	}
	if len(res.Trailer) == announced {
		for k, vv := range res.Trailer {
			dst[k] = append(dst[k], vv...)
		}
		return
	}
	for k, vv := range res.Trailer {
		for _, v := range vv {
			dst.Add(http.TrailerPrefix+k, v)
		}
	}
}

// removeResponseHopHeaders is removeHopByHopHeaders for a response head.
func removeResponseHopHeaders(h http.Header) {
	for _, f := range h["Connection"] {
		for sf := range strings.SplitSeq(f, ",") {
			if sf = strings.TrimSpace(sf); sf != "" {
				h.Del(sf)
			}
		}
	}
	for _, k := range [...]string{"Connection", "Proxy-Connection", "Keep-Alive", "Proxy-Authenticate",
		"Proxy-Authorization", "Te", "Trailer", "Transfer-Encoding", "Upgrade"} {
		delete(h, k)
	}
}

// isEventStream reports whether a Content-Type is text/event-stream, which
// ReverseProxy flushes after every write.
func isEventStream(ct string) bool {
	const es = "text/event-stream"
	if len(ct) < len(es) || !strings.EqualFold(ct[:len(es)], es) {
		return false
	}
	mt, _, _ := mime.ParseMediaType(ct)
	return mt == es
}

// copyBody copies the response body to the client with a pooled buffer,
// flushing after each write when flush is set (streams, event streams),
// as ReverseProxy does with FlushInterval 0, and reports its progress to
// t (nil: none; transfer_activity.go). It returns the error writing to the
// client or reading from upstream, whichever stopped it.
func (p *Proxy) copyBody(w http.ResponseWriter, body io.Reader, flush bool, t *transfer) (werr, rerr error) {
	bp := p.bufs.p.Get().(*[]byte)
	defer p.bufs.p.Put(bp)
	buf := *bp
	for {
		n, err := body.Read(buf)
		if n > 0 {
			nw, e := w.Write(buf[:n])
			if e == nil && nw != n {
				e = io.ErrShortWrite
			}
			if e != nil {
				return e, nil
			}
			t.add(n)
			if flush {
				// As ReverseProxy, which ignores a failed flush: the
				// next write fails too.
				_ = http.NewResponseController(w).Flush()
			}
		}
		if err == io.EOF {
			return nil, nil
		}
		if err != nil {
			return nil, err
		}
	}
}
