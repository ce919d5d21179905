package main

import (
	"context"
	"encoding/json"
	"net/http"
	"time"

	"github.com/coder/websocket"
)

// accept upgrades to a WebSocket. The origin check is off on purpose: the
// portal in front does the CSRF/origin check (SPEC §4), and tests must be
// able to see what reaches the backend.
func (s *server) accept(w http.ResponseWriter, r *http.Request) (*websocket.Conn, bool) {
	c, err := websocket.Accept(w, r, &websocket.AcceptOptions{InsecureSkipVerify: true})
	if err != nil {
		s.log.Info("websocket accept", "err", err)
		return nil, false
	}
	s.connections.Add(1)
	return c, true
}

func (s *server) handleWSEcho(w http.ResponseWriter, r *http.Request) {
	c, ok := s.accept(w, r)
	if !ok {
		return
	}
	defer s.connections.Add(-1)
	defer c.CloseNow()
	ctx := r.Context()
	for {
		typ, msg, err := c.Read(ctx)
		if err != nil {
			return
		}
		s.touch()
		if err := c.Write(ctx, typ, msg); err != nil {
			return
		}
	}
}

// jmsg is a Jupyter wire-protocol message in its JSON WebSocket form.
type jmsg struct {
	Header       map[string]any `json:"header"`
	ParentHeader map[string]any `json:"parent_header"`
	Metadata     map[string]any `json:"metadata"`
	Content      map[string]any `json:"content"`
	Channel      string         `json:"channel"`
	Buffers      []any          `json:"buffers"`
}

// handleChannels answers execute_request with busy → execute_result
// ("echo: <code>") → idle → execute_reply, and kernel_info_request with a
// minimal reply; enough for a client to see a round trip through the proxy.
func (s *server) handleChannels(w http.ResponseWriter, r *http.Request) {
	id := r.PathValue("id")
	if !s.setKernel(id, func(*kernel) {}) {
		writeJSON(w, http.StatusNotFound, map[string]string{"message": "no such kernel"})
		return
	}
	c, ok := s.accept(w, r)
	if !ok {
		return
	}
	defer s.connections.Add(-1)
	defer c.CloseNow()
	s.setKernel(id, func(k *kernel) { k.Connections++ })
	defer s.setKernel(id, func(k *kernel) { k.Connections-- })

	ctx := r.Context()
	if s.pingEvery > 0 {
		go s.keepAlive(ctx, c)
	}
	count := 0
	for {
		_, data, err := c.Read(ctx)
		if err != nil {
			return
		}
		var req jmsg
		if json.Unmarshal(data, &req) != nil {
			continue
		}
		s.touch()
		switch req.Header["msg_type"] {
		case "execute_request":
			count++
			code, _ := req.Content["code"].(string)
			s.setKernel(id, func(k *kernel) { k.ExecutionState = "busy" })
			s.send(ctx, c, req, "iopub", "status", map[string]any{"execution_state": "busy"})
			s.send(ctx, c, req, "iopub", "execute_result", map[string]any{
				"execution_count": count,
				"data":            map[string]any{"text/plain": "echo: " + code},
				"metadata":        map[string]any{},
			})
			s.setKernel(id, func(k *kernel) { k.ExecutionState = "idle" })
			s.send(ctx, c, req, "iopub", "status", map[string]any{"execution_state": "idle"})
			s.send(ctx, c, req, "shell", "execute_reply", map[string]any{"status": "ok", "execution_count": count})
		case "kernel_info_request":
			s.send(ctx, c, req, "shell", "kernel_info_reply", map[string]any{
				"status": "ok", "protocol_version": "5.3", "implementation": "fakejupyter",
				"language_info": map[string]any{"name": "python"},
			})
		}
	}
}

func (s *server) send(ctx context.Context, c *websocket.Conn, parent jmsg, channel, typ string, content map[string]any) {
	m := jmsg{
		Header: map[string]any{
			"msg_id": newID(), "msg_type": typ, "session": parent.Header["session"],
			"username": "jovyan", "date": now(), "version": "5.3",
		},
		ParentHeader: parent.Header,
		Metadata:     map[string]any{},
		Content:      content,
		Channel:      channel,
		Buffers:      []any{},
	}
	b, _ := json.Marshal(m)
	_ = c.Write(ctx, websocket.MessageText, b)
}

// keepAlive pings like Jupyter's kernel WebSockets do (every
// ws_ping_interval, 30 s by default); the reply is a pong from the
// client's WebSocket library, with no message in it.
func (s *server) keepAlive(ctx context.Context, c *websocket.Conn) {
	t := time.NewTicker(s.pingEvery)
	defer t.Stop()
	for {
		select {
		case <-ctx.Done():
			return
		case <-t.C:
			if c.Ping(ctx) != nil {
				return
			}
		}
	}
}
