package proxy

import (
	"net"
	"net/http"
	"time"
)

// NewTransport returns the transport used when Options.Transport is nil,
// tuned for a few local Jupyter servers with many concurrent requests and
// long-lived connections.
func NewTransport() *http.Transport {
	d := &net.Dialer{Timeout: 5 * time.Second, KeepAlive: 30 * time.Second}
	return &http.Transport{
		// Never route container traffic through HTTP_PROXY from the
		// environment.
		Proxy:               nil,
		DialContext:         d.DialContext,
		MaxIdleConns:        512,
		MaxIdleConnsPerHost: 64,
		IdleConnTimeout:     90 * time.Second,
		// No ResponseHeaderTimeout: Jupyter long polls and slow kernel
		// calls legitimately wait minutes for headers.
		ExpectContinueTimeout: time.Second,
		// Pass the client's Accept-Encoding through and bytes back as they
		// are; transparent gunzip would add work and hold back flushes.
		DisableCompression: true,
		// Jupyter speaks HTTP/1.1, and WebSocket upgrades need it.
		ForceAttemptHTTP2: false,
	}
}
