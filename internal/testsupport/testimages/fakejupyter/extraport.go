package main

import (
	"encoding/json"
	"log/slog"
	"net"
	"net/http"
	"strconv"
	"time"
)

// serveExtraPort plays an app on an extra port (TensorBoard, a demo app):
// it answers every path with what it received, so tests can see what the
// portal's proxy passes on (path, credentials, cookies), and tries to set
// a cookie the proxy must strip.
func serveExtraPort(ip string, port int, log *slog.Logger) {
	h := http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Set-Cookie", "app=1; Path=/")
		w.Header().Set("Content-Type", "application/json")
		json.NewEncoder(w).Encode(map[string]any{
			"app": "extra-port", "port": port, "method": r.Method, "path": r.URL.Path, "query": r.URL.RawQuery,
			"authorization": r.Header.Get("Authorization"), "cookie": r.Header.Get("Cookie"),
		})
	})
	hs := &http.Server{Addr: net.JoinHostPort(ip, strconv.Itoa(port)), Handler: h, ReadHeaderTimeout: 10 * time.Second}
	go func() {
		if err := hs.ListenAndServe(); err != nil {
			log.Error("extra port", "port", port, "err", err)
		}
	}()
}
