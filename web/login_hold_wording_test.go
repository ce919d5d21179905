package web_test

import (
	"context"
	"fmt"
	"net/http"
	"net/url"
	"strings"
	"testing"

	"workbench/models"
)

// The login page tells the address's delay apart from the account's: bob,
// behind the address someone guessed other accounts from, had typed
// nothing wrong and was told "Too many failed attempts"; ada, after her
// own wrong passwords, is told her account waits. In English and Chinese.
func TestLoginSaysWhetherTheAddressOrTheAccountWaits(t *testing.T) {
	p := newPortal(t)
	ctx := context.Background()
	for _, name := range []string{"ada", "bob"} {
		if _, err := p.srv.Store.CreateUser(ctx, models.NewUser{Username: name, Password: name + "-password-1", Role: models.RoleUser}); err != nil {
			t.Fatal(err)
		}
	}
	from := func(ip, lang string) *http.Client {
		c := p.clientFrom(ip)
		c.Transport = acceptLanguage{lang, c.Transport}
		return c
	}
	attempt := func(c *http.Client, user, password string) (int, string) {
		t.Helper()
		res, body := p.postFormBody(c, "/login", url.Values{"username": {user}, "password": {password}})
		return res.StatusCode, strings.Join(strings.Fields(mpDoc(t, body).Find(`[data-testid=login-error]`).Text()), " ")
	}
	guesser := from("127.0.0.8", "en")
	for i := 0; ; i++ {
		code, _ := attempt(guesser, fmt.Sprintf("user%d", i), "guess-password-1")
		if code == http.StatusTooManyRequests {
			break
		}
		if code != http.StatusUnauthorized || i > 100 {
			t.Fatalf("guess %d: %d", i, code)
		}
	}
	ada := from("127.0.0.9", "en")
	for i := 0; i < 5; i++ {
		attempt(ada, "ada", "wrong-password")
	}
	for _, c := range []struct {
		lang, ip, user string
		want           string
	}{
		{"en", "127.0.0.8", "bob", "Too many wrong passwords from your network address, for any account. Try again in "},
		{"zh-CN", "127.0.0.8", "bob", "你所在网络地址的密码错误次数过多（任何账户都计入），请 "},
		{"en", "127.0.0.9", "ada", "Too many wrong passwords for this account. Try again in "},
		{"zh-CN", "127.0.0.9", "ada", "此账户的密码错误次数过多，请 "},
	} {
		code, got := attempt(from(c.ip, c.lang), c.user, c.user+"-password-1")
		if code != http.StatusTooManyRequests || !strings.HasPrefix(got, c.want) {
			t.Errorf("%s, %s from %s: %d %q, want 429 %q…", c.lang, c.user, c.ip, code, got, c.want)
		}
	}
}
