package proxy

import "sync"

// bufPool recycles ReverseProxy's copy buffers; without it every proxied
// response allocates a fresh 32 KiB buffer, most of the proxy's garbage.
type bufPool struct{ p sync.Pool }

const copyBufSize = 32 << 10

func newBufPool() *bufPool {
	return &bufPool{p: sync.Pool{New: func() any { b := make([]byte, copyBufSize); return &b }}}
}

// Get and Put satisfy httputil.BufferPool. The pool holds *[]byte so that
// Put does not allocate a slice header each time.
func (bp *bufPool) Get() []byte { return *bp.p.Get().(*[]byte) }

func (bp *bufPool) Put(b []byte) {
	if cap(b) != copyBufSize {
		return
	}
	b = b[:copyBufSize]
	bp.p.Put(&b)
}
