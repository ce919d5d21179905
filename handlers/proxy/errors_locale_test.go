package proxy

import (
	"context"
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
