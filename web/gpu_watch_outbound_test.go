package web_test

import (
	"bufio"
	"context"
	"crypto/hmac"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"net/url"
	"strings"
	"sync"
	"testing"

	"workbench/models"
	"workbench/web"
)

// smtpSink is a tiny SMTP server: it accepts every message and keeps it.
type smtpSink struct {
	ln   net.Listener
	mu   sync.Mutex
	msgs []smtpMessage
}

type smtpMessage struct {
	From, To string
	Data     string
}

func newSMTPSink(t *testing.T) *smtpSink {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	s := &smtpSink{ln: ln}
	t.Cleanup(func() { ln.Close() })
	go func() {
		for {
			c, err := ln.Accept()
			if err != nil {
				return
			}
			go s.serve(c)
		}
	}()
	return s
}

func (s *smtpSink) serve(c net.Conn) {
	defer c.Close()
	r := bufio.NewReader(c)
	say := func(line string) { _, _ = io.WriteString(c, line+"\r\n") }
	say("220 sink ESMTP")
	var m smtpMessage
	for {
		line, err := r.ReadString('\n')
		if err != nil {
			return
		}
		cmd := strings.ToUpper(strings.TrimSpace(line))
		switch {
		case strings.HasPrefix(cmd, "EHLO"), strings.HasPrefix(cmd, "HELO"):
			say("250 sink")
		case strings.HasPrefix(cmd, "MAIL FROM:"):
			m.From = strings.TrimSpace(line[len("MAIL FROM:"):])
			say("250 ok")
		case strings.HasPrefix(cmd, "RCPT TO:"):
			m.To = strings.TrimSpace(line[len("RCPT TO:"):])
			say("250 ok")
		case cmd == "DATA":
			say("354 go on")
			var data strings.Builder
			for {
				l, err := r.ReadString('\n')
				if err != nil {
					return
				}
				if l == ".\r\n" {
					break
				}
				data.WriteString(l)
			}
			m.Data = data.String()
			s.mu.Lock()
			s.msgs = append(s.msgs, m)
			s.mu.Unlock()
			m = smtpMessage{}
			say("250 queued")
		case cmd == "QUIT":
			say("221 bye")
			return
		default:
			say("250 ok")
		}
	}
}

func (s *smtpSink) messages() []smtpMessage {
	s.mu.Lock()
	defer s.mu.Unlock()
	return append([]smtpMessage(nil), s.msgs...)
}

// A fired GPU watch is also mailed (net/smtp to a real SMTP conversation)
// and POSTed to the webhook as signed JSON, once per subscription: checks
// after it send nothing more. A user without an email address gets the
// webhook and the in-app notice only.
func TestGPUWatchNotifiesByEmailAndWebhook(t *testing.T) {
	sink := newSMTPSink(t)
	type hook struct {
		body map[string]any
		sig  string
	}
	var mu sync.Mutex
	var hooks []hook
	wh := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		raw, _ := io.ReadAll(r.Body)
		var b map[string]any
		_ = json.Unmarshal(raw, &b)
		mac := hmac.New(sha256.New, []byte("hook-secret"))
		mac.Write(raw)
		mu.Lock()
		hooks = append(hooks, hook{body: b, sig: strings.TrimPrefix(r.Header.Get("X-Workbench-Signature"), "sha256=")})
		mu.Unlock()
		if r.Header.Get("X-Workbench-Signature") != "sha256="+hex.EncodeToString(mac.Sum(nil)) {
			http.Error(w, "bad signature", http.StatusUnauthorized)
			return
		}
		w.WriteHeader(http.StatusNoContent)
	}))
	t.Cleanup(wh.Close)
	p := newPortal(t, func(c *web.Config) {
		c.SMTPAddr, c.SMTPFrom = sink.ln.Addr().String(), "portal@example.org"
		c.NotifyWebhook, c.NotifyWebhookSecret = wh.URL, "hook-secret"
		c.PublicURL = "https://portal.example.org"
	})
	ctx := context.Background()
	if _, err := p.srv.Store.CreateUser(ctx, models.NewUser{Username: "alice", Email: "alice@example.org", Password: "alice-password", Role: "user"}); err != nil {
		t.Fatal(err)
	}
	alice := tokenFor(t, p, "alice", "user")
	bob := tokenFor(t, p, "bob", "user") // no email address
	_, body := p.api("GET", "/api/v1/gpus", alice, "")
	var uuids []string
	var model string
	for _, g := range body["items"].([]any) {
		gm := g.(map[string]any)
		uuids, model = append(uuids, gm["uuid"].(string)), gm["model"].(string)
	}
	for _, u := range uuids {
		if err := p.srv.Store.SetGPUDrained(ctx, u, true, "admin", "test"); err != nil {
			t.Fatal(err)
		}
	}
	for _, tok := range []string{alice, bob} {
		if code, body := p.api("POST", "/api/v1/gpu-watches", tok, jsonBody(map[string]string{"gpu_model": model})); code != 201 {
			t.Fatalf("watch: %d %v", code, body)
		}
	}
	if n, err := p.srv.GPUWatch.Check(ctx); err != nil || n != 0 {
		t.Fatalf("fired %d (%v) with no GPU free", n, err)
	}
	if len(sink.messages()) != 0 || len(hooks) != 0 {
		t.Fatalf("sent with nothing fired: %d mails, %d hooks", len(sink.messages()), len(hooks))
	}
	if err := p.srv.Store.SetGPUDrained(ctx, uuids[0], false, "admin", "test"); err != nil {
		t.Fatal(err)
	}
	for i := 0; i < 3; i++ {
		if _, err := p.srv.GPUWatch.Check(ctx); err != nil {
			t.Fatal(err)
		}
	}
	mails := sink.messages()
	if len(mails) != 1 {
		t.Fatalf("%d mails, want exactly one (alice's; bob has no address): %+v", len(mails), mails)
	}
	m := mails[0]
	if m.To != "<alice@example.org>" || m.From != "<portal@example.org>" || !strings.Contains(m.Data, "Subject: Workbench: a "+model+" GPU is free") ||
		!strings.Contains(m.Data, "https://portal.example.org/workbenches/new") {
		t.Errorf("mail: %+v", m)
	}
	mu.Lock()
	defer mu.Unlock()
	if len(hooks) != 2 {
		t.Fatalf("%d webhook calls, want one per subscription (2): %+v", len(hooks), hooks)
	}
	users := map[string]bool{}
	for _, h := range hooks {
		users[h.body["user"].(string)] = true
		if h.body["event"] != "gpu_free" || h.body["gpu_model"] != model || h.body["link"] != "https://portal.example.org/workbenches/new" || h.sig == "" {
			t.Errorf("webhook body %v sig %q", h.body, h.sig)
		}
		if _, leaked := h.body["email"]; leaked {
			t.Errorf("webhook carries the user's email: %v", h.body)
		}
	}
	if !users["alice"] || !users["bob"] {
		t.Errorf("webhook users %v, want alice and bob", users)
	}
	mu.Unlock()

	// A flavor watch's mail names the flavor in its subject and links to the
	// launch form with it chosen; its webhook JSON carries the flavor.
	duo := "2x " + models.ShortGPUName(model)
	if code, body := p.api("POST", "/api/v1/gpu-watches", alice, jsonBody(map[string]string{"flavor": duo})); code != 201 {
		t.Fatalf("flavor watch: %d %v", code, body)
	}
	if err := p.srv.Store.SetGPUDrained(ctx, uuids[1], false, "admin", "test"); err != nil {
		t.Fatal(err)
	}
	if n, err := p.srv.GPUWatch.Check(ctx); err != nil || n != 1 {
		t.Fatalf("two free GPUs fired %d (%v) watches, want the flavor's", n, err)
	}
	link := "https://portal.example.org/workbenches/new?flavor=" + url.QueryEscape(duo)
	if mails = sink.messages(); len(mails) != 2 || !strings.Contains(mails[1].Data, "Subject: Workbench: flavor "+duo+" can start") || !strings.Contains(mails[1].Data, link) {
		t.Fatalf("flavor watch mail: %+v", mails)
	}
	mu.Lock()
	if len(hooks) != 3 || hooks[2].body["flavor"] != duo || hooks[2].body["link"] != link {
		t.Errorf("flavor watch webhook: %+v", hooks)
	}
}
