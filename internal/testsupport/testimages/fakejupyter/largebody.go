package main

import (
	"net/http"
	"strconv"
)

// largeBodySize is the size of GET api/large: about what JupyterLab's
// biggest static bundles weigh, so the proxy benchmarks measure how a
// proxy copies a large body, not only what it adds per request.
const largeBodySize = 1 << 20

// largeBody is built once: the endpoint measures the proxies, not the fake.
var largeBody = func() []byte {
	b := make([]byte, largeBodySize)
	for i := range b {
		b[i] = 'a' + byte(i%26)
	}
	return b
}()

// handleLarge answers 1 MiB of text with its length known, like a static
// file served by Jupyter.
func (s *server) handleLarge(w http.ResponseWriter, _ *http.Request) {
	w.Header().Set("Content-Type", "application/octet-stream")
	w.Header().Set("Content-Length", strconv.Itoa(len(largeBody)))
	_, _ = w.Write(largeBody)
}
