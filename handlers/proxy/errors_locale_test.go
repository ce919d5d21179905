package proxy

import (
	"context"
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	"workbench/templates/i18n"
)

// The proxy's own short pages are in the reader's language when Options.
// Locale says so, and English without it.
func TestErrorPagesInReadersLanguage(t *testing.T) {
	notFound := func(*http.Request, string) (Target, error) { return Target{}, ErrNotFound }
	zh := New(Options{Resolve: notFound, Locale: func(r *http.Request) context.Context {
		return i18n.WithLocale(r.Context(), i18n.Chinese)
	}})
	en := New(Options{Resolve: notFound})
	for _, c := range []struct {
		p      *Proxy
		accept string
		want   []string
	}{
		{zh, "text/html", []string{`<html lang="zh-CN">`, "<h1>未找到</h1>", "没有这个工作台。"}},
		{zh, "application/json", []string{"未找到: 没有这个工作台。"}},
		{en, "text/html", []string{`<html lang="en">`, "<h1>Not found</h1>", "There is no such workbench."}},
	} {
		r := httptest.NewRequest(http.MethodGet, "/wb/abcdefgh/lab", nil)
		r.Header.Set("Accept", c.accept)
		w := httptest.NewRecorder()
		c.p.ServeHTTP(w, r)
		body := w.Body.String()
		if w.Code != http.StatusNotFound {
			t.Errorf("%s: status %d", c.accept, w.Code)
		}
		for _, s := range c.want {
			if !strings.Contains(body, s) {
				t.Errorf("%s: page lacks %q:\n%s", c.accept, s, body)
			}
		}
	}
}

// A refused workbench token is a 403 that says what to do, in the
// reader's language: a Jupyter client shows the text.
func TestTokenRefusalInReadersLanguage(t *testing.T) {
	refused := func(*http.Request, string) (Target, error) { return Target{}, ErrBadToken }
	zh := New(Options{Resolve: refused, Locale: func(r *http.Request) context.Context {
		return i18n.WithLocale(r.Context(), i18n.Chinese)
	}})
	en := New(Options{Resolve: refused})
	for _, c := range []struct {
		p    *Proxy
		want string
	}{
		{zh, "令牌被拒绝: 这个工作台令牌未知、已过期或已撤销，或是为另一个工作台创建的。请在工作台页面的“访问令牌”下新建一个。"},
		{en, "Token refused: This workbench token is unknown, expired or revoked, or was made for another workbench. Create a new one on the workbench's page, under Access tokens."},
	} {
		r := httptest.NewRequest(http.MethodGet, "/wb/abcdefgh/api/contents", nil)
		w := httptest.NewRecorder()
		c.p.ServeHTTP(w, r)
		if w.Code != http.StatusForbidden || strings.TrimSpace(w.Body.String()) != c.want {
			t.Errorf("%d %q, want 403 %q", w.Code, w.Body.String(), c.want)
		}
	}
}

// A client that sent an Authorization header (a script with a token, an
// IDE with a workbench token) gets the refusal as JSON, in the portal
// API's shape and Jupyter's ("message", "reason"), not as plain text.
func TestRefusalToATokenClientIsJSON(t *testing.T) {
	refused := func(*http.Request, string) (Target, error) { return Target{}, ErrBadToken }
	p := New(Options{Resolve: refused})
	r := httptest.NewRequest(http.MethodGet, "/wb/abcdefgh/api/contents", nil)
	r.Header.Set("Authorization", "Bearer wbt_apitoken")
	w := httptest.NewRecorder()
	p.ServeHTTP(w, r)
	var body struct {
		Error struct {
			Code, Message string
		}
		Message, Reason string
	}
	if err := json.Unmarshal(w.Body.Bytes(), &body); err != nil || w.Code != http.StatusForbidden ||
		!strings.HasPrefix(w.Header().Get("Content-Type"), "application/json") {
		t.Fatalf("%d %s %q (%v)", w.Code, w.Header().Get("Content-Type"), w.Body.String(), err)
	}
	if body.Error.Code != "forbidden" || !strings.HasPrefix(body.Error.Message, "Token refused: ") ||
		body.Reason != "Token refused" || body.Message == "" {
		t.Fatalf("body %+v", body)
	}
}
