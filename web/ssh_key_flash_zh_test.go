package web_test

import (
	"net/http"
	"net/url"
	"strings"
	"testing"

	"workbench/web"
)

// A Chinese reader's "key added" flash names the verification deadline
// last, before the full stop: the date ends in a full-width parenthesis
// (the reader's own zone), and Chinese puts no space after one. The
// translation had "请在 %s 之前…", which read "UTC（16:22 UTC+8） 之前".
func TestSSHKeyAddedFlashInChineseHasNoSpaceAfterTheDeadline(t *testing.T) {
	p := newPortal(t, func(c *web.Config) { c.SSHAddr = "127.0.0.1:2222" })
	tokenFor(t, p, "lin", "user")
	zh, _ := p.readersSignedIn("lin", "lin-password")
	if res := p.postForm(zh, "/settings/time-zone", url.Values{"time_zone": {"Asia/Shanghai"}}); res.StatusCode >= 400 {
		t.Fatalf("time zone: %d", res.StatusCode)
	}
	p.sudo(zh, "lin-password")
	key, _ := newAuthorizedKey(t, "lin@laptop")
	if res, _ := p.postFormBody(zh, "/settings/ssh-keys", url.Values{"name": {"laptop"}, "public_key": {key}}); res.StatusCode != http.StatusSeeOther {
		t.Fatalf("add key: %d", res.StatusCode)
	}
	_, page := p.get(zh, "/settings/ssh-keys")
	flash := strings.Join(strings.Fields(mpDoc(t, page).Find(`[data-testid=flash]`).Text()), " ")
	if !strings.Contains(flash, "SSH 密钥已添加") || !strings.Contains(flash, "UTC+8）。") {
		t.Fatalf("the flash: %q, want the Chinese sentence ending in the reader's time and a full stop", flash)
	}
	if strings.Contains(flash, "） ") {
		t.Errorf("a space after the full-width parenthesis: %q", flash)
	}
}
