package orchestrator

import (
	"bytes"
	"context"
	"crypto/hmac"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"mime"
	"net"
	"net/http"
	"net/smtp"
	"strings"
	"time"
)

// Notice is a notification sent outside the portal (email, webhook) next
// to the in-app one: a GPU watch fired, or something happened to the
// user's workbench (the Event* constants of notify_owner.go).
type Notice struct {
	Event    string `json:"event"` // "gpu_free", "workbench_started", …
	WatchID  int64  `json:"watch_id,omitempty"`
	User     string `json:"user"`
	Email    string `json:"-"`
	GPUModel string `json:"gpu_model,omitempty"`
	Flavor   string `json:"flavor,omitempty"` // a flavor watch: the flavor that can start
	// Workbench and WorkbenchID name the workbench of a workbench event.
	Workbench   string    `json:"workbench,omitempty"`
	WorkbenchID string    `json:"workbench_id,omitempty"`
	Message     string    `json:"message"`
	Link        string    `json:"link"` // absolute when the portal's public URL is set
	At          time.Time `json:"at"`
	// Locale and TimeZone are the user's saved language ("" for the
	// portal's default, English) and zone ("" for UTC only): an email is
	// worded in them (SMTPSender.Word). The webhook is the operator's
	// integration and stays as the event wrote it, English and UTC, so
	// they are not in its JSON.
	Locale   string `json:"-"`
	TimeZone string `json:"-"`
}

// subject is the email subject of n, in English as the message is: a
// format of the reasons catalog, so that the sender's Word puts it in the
// reader's language as it does the message. Every event has its own; one
// without fell through to the GPU watch's ("a  GPU is free").
func (n Notice) subject() string {
	switch n.Event {
	case EventStarted:
		return reasonf("Workbench: %s is running", n.Workbench)
	case EventPreempt:
		return reasonf("Workbench: %s must yield its GPUs", n.Workbench)
	case EventSpared:
		return reasonf("Workbench: %s no longer has to yield its GPUs", n.Workbench)
	case EventPreempted:
		return reasonf("Workbench: %s was preempted", n.Workbench)
	case EventStopped:
		return reasonf("Workbench: %s was stopped", n.Workbench)
	case EventStoppingSoon:
		return reasonf("Workbench: %s stops soon", n.Workbench)
	case EventExpired:
		return reasonf("Workbench: %s left the queue", n.Workbench)
	case EventFailed:
		return reasonf("Workbench: %s could not start", n.Workbench)
	case EventSaveCutShort:
		return reasonf("Workbench: saving %s as an image was cut short", n.Workbench)
	case EventSaveRecatalogued:
		return reasonf("Workbench: your saved image from %s is back in your launch form", n.Workbench)
	case EventHomeLost:
		return reasonf("Workbench: your home volume was removed")
	case EventStorageOver:
		return reasonf("Workbench: your home storage is over your quota")
	case EventRenamed:
		return reasonf("Workbench: your account was renamed")
	}
	if n.Flavor != "" {
		return reasonf("Workbench: flavor %s can start", n.Flavor)
	}
	return reasonf("Workbench: a %s GPU is free", n.GPUModel)
}

// headerText is text as one line of a mail header: line breaks become
// spaces, and text that is not plain ASCII (a Chinese subject) is an
// RFC 2047 encoded word; ASCII text is left as it is.
func headerText(text string) string {
	return mime.QEncoding.Encode("utf-8", strings.NewReplacer("\r", " ", "\n", " ").Replace(text))
}

// Sender delivers notices one way (SMTP, webhook).
type Sender interface {
	Name() string
	Send(ctx context.Context, n Notice) error
}

// SMTPSender mails a notice to the user's address with net/smtp (STARTTLS
// when the server offers it; PLAIN auth only when a username is set, and
// net/smtp sends it only over TLS or to localhost).
type SMTPSender struct {
	Addr     string // host:port
	From     string
	Username string
	Password string
	// Word, where set, words a text of n (its subject, its message:
	// English, times in UTC) for n's reader, n.Locale and n.TimeZone, as
	// the notifications page words it. The portal sets it (web): the
	// translations live in the layer above. Nil sends them as written.
	Word func(ctx context.Context, n Notice, text string) string
}

// Name names the channel in logs.
func (s *SMTPSender) Name() string { return "email" }

// errNoAddress: the user has no email address; nothing to send.
var errNoAddress = errors.New("the user has no email address")

// Send mails n.
func (s *SMTPSender) Send(ctx context.Context, n Notice) error {
	if n.Email == "" {
		return errNoAddress
	}
	if strings.ContainsAny(n.Email, "\r\n") || strings.ContainsAny(s.From, "\r\n") {
		return errors.New("bad address")
	}
	var auth smtp.Auth
	if s.Username != "" {
		host, _, _ := net.SplitHostPort(s.Addr)
		auth = smtp.PlainAuth("", s.Username, s.Password, host)
	}
	// The reader's words and nothing else: the Chinese text is the whole
	// message (an English copy under it would say it twice), then the link.
	subject, body := n.subject(), n.Message
	if s.Word != nil {
		subject, body = s.Word(ctx, n, subject), s.Word(ctx, n, body)
	}
	var msg bytes.Buffer
	fmt.Fprintf(&msg, "From: %s\r\nTo: %s\r\nSubject: %s\r\nDate: %s\r\nMIME-Version: 1.0\r\nContent-Type: text/plain; charset=utf-8\r\nContent-Transfer-Encoding: 8bit\r\n\r\n",
		s.From, n.Email, headerText(subject), n.At.Format(time.RFC1123Z))
	fmt.Fprintf(&msg, "%s\r\n\r\n%s\r\n", body, n.Link)
	// net/smtp has no context: bound it by running it aside.
	done := make(chan error, 1)
	go func() { done <- smtp.SendMail(s.Addr, auth, s.From, []string{n.Email}, msg.Bytes()) }()
	select {
	case err := <-done:
		return err
	case <-ctx.Done():
		return ctx.Err()
	}
}

// WebhookSender POSTs the notice as JSON to a URL the operator set. With a
// secret, X-Workbench-Signature carries "sha256=" + HMAC-SHA256(body), so
// the receiver can tell it came from the portal.
type WebhookSender struct {
	URL    string
	Secret string
	Client *http.Client
}

// Name names the channel in logs.
func (w *WebhookSender) Name() string { return "webhook" }

// Send posts n.
func (w *WebhookSender) Send(ctx context.Context, n Notice) error {
	body, err := json.Marshal(n)
	if err != nil {
		return err
	}
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, w.URL, bytes.NewReader(body))
	if err != nil {
		return err
	}
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("User-Agent", "workbench-notify")
	if w.Secret != "" {
		mac := hmac.New(sha256.New, []byte(w.Secret))
		mac.Write(body)
		req.Header.Set("X-Workbench-Signature", "sha256="+hex.EncodeToString(mac.Sum(nil)))
	}
	c := w.Client
	if c == nil {
		c = &http.Client{Timeout: 10 * time.Second}
	}
	res, err := c.Do(req)
	if err != nil {
		return err
	}
	defer res.Body.Close()
	if res.StatusCode/100 != 2 {
		return fmt.Errorf("webhook answered %s", res.Status)
	}
	return nil
}
