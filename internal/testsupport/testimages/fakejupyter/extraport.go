package main

import (
	"encoding/json"
	"log/slog"
	"net"
	"net/http"
	"strconv"
	"strings"
	"time"

	"github.com/coder/websocket"
)

// serveExtraPort plays an app on an extra port (TensorBoard, a demo app):
// it answers every path with what it received, so tests can see what the
// portal's proxy passes on (path, credentials, cookies), and tries to set
// a cookie the proxy must strip. A WebSocket opened on /ws (as Gradio's
// and Streamlit's front ends open theirs) first gets a JSON message with
// what reached the app, then echoes every message back.
func serveExtraPort(ip string, port int, log *slog.Logger) {
	h := http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Path == "/ws" && strings.EqualFold(r.Header.Get("Upgrade"), "websocket") {
			extraPortWSEcho(w, r, port, log)
			return
		}
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

// extraPortWSEcho serves the extra port's WebSocket. Like the notebook's
// echo, it does not check the origin itself: the portal's proxy must.
func extraPortWSEcho(w http.ResponseWriter, r *http.Request, port int, log *slog.Logger) {
	c, err := websocket.Accept(w, r, &websocket.AcceptOptions{InsecureSkipVerify: true})
	if err != nil {
		log.Info("extra port websocket accept", "err", err)
		return
	}
	defer c.CloseNow()
	ctx := r.Context()
	hello, _ := json.Marshal(map[string]any{"app": "extra-port-ws", "port": port, "path": r.URL.Path,
		"authorization": r.Header.Get("Authorization"), "cookie": r.Header.Get("Cookie")})
	if err := c.Write(ctx, websocket.MessageText, hello); err != nil {
		return
	}
	for {
		typ, msg, err := c.Read(ctx)
		if err != nil {
			return
		}
		if err := c.Write(ctx, typ, msg); err != nil {
			return
		}
	}
}
