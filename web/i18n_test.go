package web_test

import (
	"context"
	"io"
	"net/http"
	"net/url"
	"strings"
	"testing"

	"github.com/PuerkitoBio/goquery"

	"workbench/models"
	"workbench/web"
)

// A Chinese browser gets the login page in Chinese; an English or unknown
// one in English, as before.
func TestLoginPageFollowsAcceptLanguage(t *testing.T) {
	p := newPortal(t)
	for _, c := range []struct {
		accept, lang, want, not string
	}{
		{"zh-CN,zh;q=0.9,en;q=0.8", "zh-CN", "用户名", "Username"},
		{"zh", "zh-CN", "登录", "Log in<"},
		{"en-US,en;q=0.9", "en", "Username", "用户名"},
		{"fr-FR", "en", "Username", "用户名"},
		{"", "en", "Username", "用户名"},
	} {
		req, _ := http.NewRequest(http.MethodGet, p.ts.URL+"/login", nil)
		if c.accept != "" {
			req.Header.Set("Accept-Language", c.accept)
		}
		res, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		var b strings.Builder
		_, _ = readBody(&b, res)
		body := b.String()
		if !strings.Contains(body, `<html lang="`+c.lang+`">`) {
			t.Errorf("Accept-Language %q: no <html lang=%q>", c.accept, c.lang)
		}
		if got := res.Header.Get("Content-Language"); got != c.lang {
			t.Errorf("Accept-Language %q: Content-Language %q, want %q", c.accept, got, c.lang)
		}
		if !strings.Contains(body, c.want) || strings.Contains(body, c.not) {
			t.Errorf("Accept-Language %q: want %q and not %q in the login page", c.accept, c.want, c.not)
		}
	}
}

// The switch: an anonymous visitor gets the cookie; a signed-in user's
// choice is saved and beats both the cookie and Accept-Language; next is
// kept on this site; an unknown language is refused.
func TestLanguageSwitchSavesChoice(t *testing.T) {
	p := newPortal(t, func(c *web.Config) { c.Currency = "CNY" })
	ctx := context.Background()
	if _, err := p.srv.Store.CreateUser(ctx, models.NewUser{Username: "lin", Password: "lin-password-1", Role: models.RoleUser}); err != nil {
		t.Fatal(err)
	}
	anon := p.client()
	res := p.postForm(anon, "/language", url.Values{"lang": {"zh-CN"}, "back": {"/login?next=%2Fusage"}})
	if res.StatusCode != http.StatusSeeOther || res.Header.Get("Location") != "/login?next=%2Fusage" {
		t.Fatalf("switch: %d to %q", res.StatusCode, res.Header.Get("Location"))
	}
	if _, body := p.get(anon, "/login"); !strings.Contains(body, "用户名") {
		t.Fatal("after the switch the login page is not Chinese")
	}
	if res := p.postForm(anon, "/language", url.Values{"lang": {"zh-CN"}, "back": {"//evil.example/x"}}); res.Header.Get("Location") != "/" {
		t.Errorf("next to another site: went to %q", res.Header.Get("Location"))
	}
	if res := p.postForm(anon, "/language", url.Values{"lang": {"fr"}, "back": {"/"}}); res.StatusCode != http.StatusBadRequest {
		t.Errorf("unknown language: status %d", res.StatusCode)
	}

	// lin signs in with an English browser, picks Chinese: saved.
	c := p.client()
	p.login(c, "lin", "lin-password-1")
	p.postForm(c, "/language", url.Values{"lang": {"zh-CN"}, "back": {"/usage"}})
	u, _ := p.srv.Store.UserByUsername(ctx, "lin")
	if u.Locale != "zh-CN" {
		t.Fatalf("saved locale %q", u.Locale)
	}
	// A fresh browser (no cookie), English Accept-Language: still Chinese.
	c2 := p.client()
	p.login(c2, "lin", "lin-password-1")
	req, _ := http.NewRequest(http.MethodGet, p.ts.URL+"/usage", nil)
	req.Header.Set("Accept-Language", "en-US")
	res, err := c2.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	var b strings.Builder
	_, _ = readBody(&b, res)
	body := b.String()
	if !strings.Contains(body, `<html lang="zh-CN">`) || !strings.Contains(body, "用量") || !strings.Contains(body, "¥0.00") {
		t.Errorf("lin's usage page in a fresh English browser is not Chinese with ¥ amounts")
	}
	// And home: Chinese, with the language switch offering English.
	_, home := p.get(c2, "/")
	if !strings.Contains(home, "新建工作台") || !strings.Contains(home, `data-testid="lang-en"`) {
		t.Errorf("lin's home page is not Chinese")
	}
	// The pool page's inventory line too (written below the handlers).
	_, gpus := p.get(c2, "/gpus")
	if st := strings.Join(strings.Fields(mpDoc(t, gpus).Find(`[data-testid=gpu-status]`).Contents().First().Text()), " "); !strings.HasPrefix(st, "模拟 GPU（") || !strings.HasSuffix(st, "8 块 GPU") {
		t.Errorf("the inventory line on the Chinese pool page reads %q", st)
	}
	// The texts the portal seeded (a class's, a default image's
	// description) are Chinese on the launch form; once an administrator
	// rewrites one it is shown as written.
	_, launch := p.get(c2, "/workbenches/new")
	form := mpDoc(t, launch)
	if o := form.Find(`[data-testid=launch-priority] option[value=interactive]`).Text(); !strings.Contains(o, "有人在等待：排在队列最前，从不被抢占") {
		t.Errorf("the interactive class on the Chinese launch form reads %q", o)
	}
	if d := form.Find(`[data-testid=image-choice]`).FilterFunction(func(_ int, s *goquery.Selection) bool {
		return strings.Contains(s.Text(), "NVIDIA NGC PyTorch")
	}).Text(); !strings.Contains(d, "NVIDIA 优化的 PyTorch 容器（NGC 24.10）") {
		t.Errorf("the NGC image on the Chinese launch form reads %q", strings.Join(strings.Fields(d), " "))
	}
	pc, err := p.srv.Store.PriorityClassFor(ctx, "interactive")
	if err != nil {
		t.Fatal(err)
	}
	pc.Description = "someone waits for it"
	if err := p.srv.Store.SavePriorityClass(ctx, pc); err != nil {
		t.Fatal(err)
	}
	if _, launch := p.get(c2, "/workbenches/new"); !strings.Contains(mpDoc(t, launch).Find(`[data-testid=launch-priority] option[value=interactive]`).Text(), "someone waits for it") {
		t.Error("an administrator's own class description is not shown as written")
	}
	// Back to English.
	p.postForm(c2, "/language", url.Values{"lang": {"en"}, "back": {"/"}})
	if _, home := p.get(c2, "/"); !strings.Contains(home, "New workbench") || !strings.Contains(home, `<html lang="en">`) {
		t.Errorf("after switching back the home page is not English")
	}
}

func readBody(b *strings.Builder, res *http.Response) (int64, error) {
	defer res.Body.Close()
	return io.Copy(b, res.Body)
}
