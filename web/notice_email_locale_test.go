package web_test

import (
	"context"
	"encoding/json"
	"io"
	"mime"
	"net/http"
	"net/http/httptest"
	"net/mail"
	"sort"
	"strings"
	"sync"
	"testing"
	"time"

	"workbench/models"
	"workbench/orchestrator"
	"workbench/web"
)

// readMail parses a mail the sink kept: its subject decoded (a Chinese one
// is an RFC 2047 encoded word) and its body.
func readMail(t *testing.T, m smtpMessage) (subject, body string) {
	t.Helper()
	msg, err := mail.ReadMessage(strings.NewReader(m.Data))
	if err != nil {
		t.Fatalf("mail %q: %v", m.Data, err)
	}
	subject, err = new(mime.WordDecoder).DecodeHeader(msg.Header.Get("Subject"))
	if err != nil {
		t.Fatalf("subject %q: %v", msg.Header.Get("Subject"), err)
	}
	raw, _ := io.ReadAll(msg.Body)
	return subject, string(raw)
}

// hookSink is a webhook receiver keeping each body as the raw JSON fields.
type hookSink struct {
	mu     sync.Mutex
	bodies []map[string]json.RawMessage
}

func newHookSink(t *testing.T) (*hookSink, string) {
	t.Helper()
	h := &hookSink{}
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		raw, _ := io.ReadAll(r.Body)
		var b map[string]json.RawMessage
		_ = json.Unmarshal(raw, &b)
		h.mu.Lock()
		h.bodies = append(h.bodies, b)
		h.mu.Unlock()
		w.WriteHeader(http.StatusNoContent)
	}))
	t.Cleanup(srv.Close)
	return h, srv.URL
}

func (h *hookSink) all() []map[string]json.RawMessage {
	h.mu.Lock()
	defer h.mu.Unlock()
	return append([]map[string]json.RawMessage(nil), h.bodies...)
}

func fieldNames(b map[string]json.RawMessage) string {
	var names []string
	for k := range b {
		names = append(names, k)
	}
	sort.Strings(names)
	return strings.Join(names, " ")
}

// An email is worded as the notifications page words the notice for the
// same user: a user who chose Chinese and Asia/Shanghai gets the subject
// and the message in Chinese, the deadline in their zone beside UTC, and
// the link (no English copy); a user who chose nothing gets English and
// UTC, word for word the stored message; one who chose English and a zone
// gets English with the zone beside UTC. The webhook, the operator's
// integration, gets the same English JSON for all of them.
func TestNoticeEmailIsWordedForItsReader(t *testing.T) {
	sink := newSMTPSink(t)
	hooks, hookURL := newHookSink(t)
	cfg := web.Config{SMTPAddr: sink.ln.Addr().String(), SMTPFrom: "portal@example.org", NotifyWebhook: hookURL}
	senders := cfg.NoticeSenders()
	// The message as orchestrator/preempt.go writes it.
	msg := models.Reasonf("Workbench %s must yield its GPUs to higher-priority work: it stops at %s UTC. Save a checkpoint now; its home is kept.",
		"overnight", "2026-12-06 08:22:05")
	link := "https://portal.example.org/workbenches/wb-1"
	readers := []struct {
		email, locale, zone string
		subject             string
		body                []string // in the body, in this order
		notIn               []string
	}{
		{"lin@example.org", "zh-CN", "Asia/Shanghai", "Workbench：overnight 必须让出 GPU",
			[]string{"工作台 overnight 必须把 GPU 让给更高优先级的工作：它将于 2026年12月6日 08:22:05 UTC（16:22 UTC+8）停止。", link},
			[]string{"must yield", "higher-priority"}},
		{"ann@example.org", "", "", "Workbench: overnight must yield its GPUs",
			[]string{msg + "\r\n\r\n" + link + "\r\n"}, []string{"UTC+"}},
		{"eve@example.org", "en", "Asia/Shanghai", "Workbench: overnight must yield its GPUs",
			[]string{"it stops at 2026-12-06 08:22:05 UTC (16:22 UTC+8). Save a checkpoint now", link}, nil},
	}
	ctx := context.Background()
	for i, r := range readers {
		n := orchestrator.Notice{Event: orchestrator.EventPreempt, User: "u", Email: r.email, Workbench: "overnight", WorkbenchID: "wb-1",
			Message: msg, Link: link, At: time.Date(2026, 12, 6, 8, 20, 0, 0, time.UTC), Locale: r.locale, TimeZone: r.zone}
		for _, s := range senders {
			if err := s.Send(ctx, n); err != nil {
				t.Fatalf("%s: %v", s.Name(), err)
			}
		}
		mails := sink.messages()
		if len(mails) != i+1 || mails[i].To != "<"+r.email+">" {
			t.Fatalf("mails %+v, want %s's", mails, r.email)
		}
		subject, body := readMail(t, mails[i])
		if subject != r.subject {
			t.Errorf("%s: subject %q, want %q", r.email, subject, r.subject)
		}
		rest := body
		for _, want := range r.body {
			k := strings.Index(rest, want)
			if k < 0 {
				t.Errorf("%s: body %q lacks %q (or has it out of order)", r.email, body, want)
				break
			}
			rest = rest[k+len(want):]
		}
		for _, not := range r.notIn {
			if strings.Contains(body, not) {
				t.Errorf("%s: body %q has %q", r.email, body, not)
			}
		}
	}
	bodies := hooks.all()
	if len(bodies) != len(readers) {
		t.Fatalf("%d webhook calls, want %d", len(bodies), len(readers))
	}
	for _, b := range bodies {
		var m string
		_ = json.Unmarshal(b["message"], &m)
		if fields := fieldNames(b); fields != "at event link message user workbench workbench_id" || m != msg {
			t.Errorf("webhook fields %q message %q, want the stored English message and no reader's settings", fields, m)
		}
	}
}

// Through the portal: the notice a renamed user is told (Manager.RenameUser,
// an administrator's rename) is emailed in the language the user saved
// (models.User.Locale), with a subject of its own; the webhook carries the
// English message the in-app notification stores.
func TestRenameEmailIsInTheUsersSavedLanguage(t *testing.T) {
	sink := newSMTPSink(t)
	hooks, hookURL := newHookSink(t)
	p := newPortal(t, func(c *web.Config) {
		c.SMTPAddr, c.SMTPFrom = sink.ln.Addr().String(), "portal@example.org"
		c.NotifyWebhook = hookURL
		c.PublicURL = "https://portal.example.org"
	})
	ctx := context.Background()
	lin, err := p.srv.Store.CreateUser(ctx, models.NewUser{Username: "lin", Email: "lin@example.org", Password: "lin-password", Role: "user"})
	if err != nil {
		t.Fatal(err)
	}
	if err := p.srv.Store.SetUserLocale(ctx, lin.ID, "zh-CN"); err != nil {
		t.Fatal(err)
	}
	if err := p.srv.Store.SetUserTimeZone(ctx, lin.ID, "Asia/Shanghai"); err != nil {
		t.Fatal(err)
	}
	if renamed, err := p.srv.Manager.RenameUser(ctx, "root", lin, "lin2"); err != nil || !renamed {
		t.Fatalf("rename: %v %v", renamed, err)
	}
	mails := sink.messages()
	if len(mails) != 1 || mails[0].To != "<lin@example.org>" {
		t.Fatalf("mails %+v, want lin's", mails)
	}
	subject, body := readMail(t, mails[0])
	if subject != "Workbench：你的账户已被重命名" {
		t.Errorf("subject %q", subject)
	}
	if !strings.Contains(body, "管理员（root）已将你的账户从 lin 重命名为 lin2：今后请以 lin2 登录。") ||
		!strings.Contains(body, "https://portal.example.org/") || strings.Contains(body, "renamed your account") {
		t.Errorf("body %q", body)
	}
	bodies := hooks.all()
	var m string
	if len(bodies) == 1 {
		_ = json.Unmarshal(bodies[0]["message"], &m)
	}
	if len(bodies) != 1 || !strings.HasPrefix(m, "An administrator (root) renamed your account from lin to lin2") || fieldNames(bodies[0]) != "at event link message user" {
		t.Errorf("webhook %v", bodies)
	}
}

// On the real engine: the owner of a preemptible run who chose Chinese
// and Asia/Shanghai is mailed that it must yield in Chinese, its deadline
// in their zone beside UTC as the notifications page shows it; the webhook
// carries the same English message, UTC only, with the fields it had.
func TestPreemptionEmailIsInTheOwnersLanguageAndZone(t *testing.T) {
	sink := newSMTPSink(t)
	hooks, hookURL := newHookSink(t)
	p, _ := enginePortal(t, func(c *web.Config) {
		c.SMTPAddr, c.SMTPFrom = sink.ln.Addr().String(), "portal@example.org"
		c.NotifyWebhook = hookURL
		c.PublicURL = "https://portal.example.org"
		c.Workbenches.DrainEvery = 200 * time.Millisecond
	})
	ctx := context.Background()
	lin, err := p.srv.Store.CreateUser(ctx, models.NewUser{Username: "lin", Email: "lin@example.org", Password: "lin-password", Role: "user"})
	if err != nil {
		t.Fatal(err)
	}
	if err := p.srv.Store.SetUserLocale(ctx, lin.ID, "zh-CN"); err != nil {
		t.Fatal(err)
	}
	if err := p.srv.Store.SetUserTimeZone(ctx, lin.ID, "Asia/Shanghai"); err != nil {
		t.Fatal(err)
	}
	id := preemptOvernight(t, p, tokenFor(t, p, "lin", "user"))
	deadline := time.Now().Add(2 * time.Minute)
	for len(sink.messages()) == 0 || len(hooks.all()) == 0 {
		if time.Now().After(deadline) {
			t.Fatalf("no mail or webhook two minutes after the preemption: %d mails, %d hooks", len(sink.messages()), len(hooks.all()))
		}
		time.Sleep(20 * time.Millisecond) // poll: the notice goes out after the drain
	}
	h := hooks.all()[0]
	var msg string
	_ = json.Unmarshal(h["message"], &msg)
	var stops string
	if k := strings.Index(msg, "it stops at "); k >= 0 {
		stops, _, _ = strings.Cut(msg[k+len("it stops at "):], " UTC.")
	}
	at, err := time.Parse("2006-01-02 15:04:05", stops)
	if !strings.HasPrefix(msg, "Workbench overnight must yield its GPUs to higher-priority work: it stops at ") || err != nil ||
		fieldNames(h) != "at event link message user workbench workbench_id" {
		t.Fatalf("webhook %v: want the English message in UTC and the fields it had (%v)", h, err)
	}
	subject, body := readMail(t, sink.messages()[0])
	shanghai, _ := time.LoadLocation("Asia/Shanghai")
	utc, local := at.Format("2006年1月2日 15:04:05 UTC")+"（", at.In(shanghai).Format("15:04")+" UTC+8）"
	if subject != "Workbench：overnight 必须让出 GPU" || !strings.HasPrefix(body, "工作台 overnight 必须把 GPU 让给更高优先级的工作：它将于 "+utc) ||
		!strings.Contains(body, local+"停止。") || !strings.HasSuffix(body, "\r\n\r\nhttps://portal.example.org/workbenches/"+id+"\r\n") ||
		strings.Contains(body, "must yield") {
		t.Errorf("mail subject %q body %q, want Chinese with %s…%s", subject, body, utc, local)
	}
	// The message is the one the notifications page shows lin.
	c := p.client()
	p.login(c, "lin", "lin-password")
	_, page := p.get(c, "/notifications")
	shown := strings.TrimSpace(mpDoc(t, page).Find(`[data-testid=notification] strong`).Text())
	if text, _, _ := strings.Cut(body, "\r\n"); shown == "" || text != shown {
		t.Errorf("mail says %q, the notifications page %q", text, shown)
	}
}
