package proxy

import (
	"errors"
	"io"
	"math"
	"net/http"
	"strconv"
	"time"

	"workbench/templates/i18n"
)

// DefaultMaxBody is Jupyter server's own limit on one request body
// (ServerApp.max_body_size, 512 MiB). Over it, Jupyter's server (tornado)
// closes the connection with a bare 400 and an empty body, which told the
// user nothing; the proxy answers first, saying what to do instead.
const DefaultMaxBody int64 = 512 << 20

// noBodyLimit is Options.MaxBody < 0: every body is passed on, and
// Jupyter answers those over its own limit.
const noBodyLimit = math.MaxInt64

// maxBody is the limit New keeps: one integer that a request's declared
// length is compared with, the only cost to a request under it.
func maxBody(o Options) int64 {
	switch {
	case o.MaxBody == 0:
		return DefaultMaxBody
	case o.MaxBody < 0:
		return noBodyLimit
	}
	return o.MaxBody
}

// limitUnknownLength caps a body sent without a length (chunked) at the
// limit: its length is known only once it is read, so it goes upstream as
// it comes and, at one byte over, the read fails, the transport drops the
// upstream connection and errorHandler answers 413 (bodyTooLarge). Jupyter
// has by then received at most the limit and no complete request, so it
// has done nothing with it; tornado itself would refuse the body at the
// same size, with its bare 400. It returns the cap, for errorHandler to
// read the rest of the client's body from (nil: no cap).
func (p *Proxy) limitUnknownLength(r *http.Request, t Target) *cappedBody {
	if r.ContentLength < 0 && t.StripPrefix == "" && p.maxBody != noBodyLimit && r.Body != nil && r.Body != http.NoBody {
		c := &cappedBody{client: r.Body, limit: p.maxBody, left: p.maxBody}
		r.Body = c
		return c
	}
	return nil
}

// cappedBody is http.MaxBytesReader's cap with one difference: once the
// cap is hit, Close leaves the client's body open. The transport closes
// the body it was sending when the send fails, and a closed server body
// can no longer be read; the 413 needs to read and drop the rest of it
// (refuseTooLarge) so that the client, still sending, reads the answer
// instead of a reset. net/http closes the client's body itself when the
// handler returns.
type cappedBody struct {
	client io.ReadCloser
	limit  int64
	left   int64 // bytes still allowed
	over   bool
}

func (c *cappedBody) Read(b []byte) (int, error) {
	if c.over {
		return 0, &http.MaxBytesError{Limit: c.limit}
	}
	if int64(len(b)) > c.left+1 {
		b = b[:c.left+1] // one byte more than allowed tells "over"
	}
	n, err := c.client.Read(b)
	if int64(n) <= c.left {
		c.left -= int64(n)
		return n, err
	}
	n = int(c.left)
	c.over = true
	return n, &http.MaxBytesError{Limit: c.limit}
}

func (c *cappedBody) Close() error {
	if c.over {
		return nil
	}
	return c.client.Close()
}

// bodyTooLarge reports whether err is limitUnknownLength's cut.
func bodyTooLarge(err error) bool {
	var tl *http.MaxBytesError
	return errors.As(err, &tl)
}

// tooLarge answers a request whose body is over the limit: 413 with what
// to do instead (JSON with code body_too_large and limit_bytes for a client
// with a token, as the proxy's other refusals). The connection is closed
// after the answer; refuseTooLarge first reads and drops what the client
// still sends.
func (p *Proxy) tooLarge(w http.ResponseWriter, r *http.Request, id string) {
	p.log.Info("proxy: request body over the limit refused",
		"workbench", id, "method", r.Method, "path", r.URL.Path, "content_length", r.ContentLength, "limit", p.maxBody)
	w.Header().Set("Connection", "close")
	lc := p.locale(r)
	size := formatBytes(p.maxBody)
	msg := i18n.T(lc, "This request's body is larger than the %s JupyterLab accepts in one request, so the portal did not pass it on. JupyterLab's own upload sends big files in chunks; a script can do the same with Jupyter's contents API (PUT with \"chunk\": 1, 2, … and -1 for the last part).", size)
	if p.opts.SSH {
		msg = i18n.T(lc, "This request's body is larger than the %s JupyterLab accepts in one request, so the portal did not pass it on. JupyterLab's own upload sends big files in chunks; a script can do the same with Jupyter's contents API (PUT with \"chunk\": 1, 2, … and -1 for the last part), or copy the file over the portal's SSH (scp, sftp, or tar through ssh).", size)
	}
	writeErrorDetail(lc, w, r, http.StatusRequestEntityTooLarge, i18n.T(lc, "Upload too large"), msg, false,
		map[string]any{"limit_bytes": p.maxBody})
}

// What the proxy reads and drops of a refused body before it closes the
// connection (nginx's lingering close, whose defaults these are): in all
// lingerTime, and no gap longer than lingerIdle.
const (
	lingerTime = 30 * time.Second
	lingerIdle = 5 * time.Second
)

// refuseTooLarge answers a body over the limit (declared, or counted on
// its way: rest is then the client's body behind the cap), then reads
// and drops what the client goes on sending, so that it reads the
// answer. A client still sending when the portal closes gets a reset, and
// a reset drops whatever the client had received but not read: a browser
// or a script saw "connection reset" instead of the 413, more often the
// busier the machine (net/http alone waits half a second and reads
// nothing). Past lingerTime, or lingerIdle without a byte, the connection
// is closed anyway.
func (p *Proxy) refuseTooLarge(w http.ResponseWriter, r *http.Request, id string, rest io.Reader) {
	rc := http.NewResponseController(w)
	// Before the answer: without it net/http would give up on the body
	// as the answer is written (over 256 KiB unread).
	fullDuplex := rc.EnableFullDuplex() == nil
	p.tooLarge(w, r, id)
	if !fullDuplex || rc.Flush() != nil {
		return
	}
	buf := p.bufs.Get()
	defer p.bufs.Put(buf)
	end := time.Now().Add(lingerTime)
	for {
		now := time.Now()
		if !now.Before(end) {
			return
		}
		deadline := now.Add(lingerIdle)
		if deadline.After(end) {
			deadline = end
		}
		if rc.SetReadDeadline(deadline) != nil {
			return
		}
		if _, err := rest.Read(buf); err != nil {
			return
		}
	}
}

// formatBytes writes a limit as it was most likely set: whole MiB or
// KiB, else bytes.
func formatBytes(n int64) string {
	switch {
	case n >= 1<<20 && n%(1<<20) == 0:
		return strconv.FormatInt(n>>20, 10) + " MiB"
	case n >= 1<<10 && n%(1<<10) == 0:
		return strconv.FormatInt(n>>10, 10) + " KiB"
	}
	return strconv.FormatInt(n, 10) + " B"
}
