package i18n

import (
	"context"
	"testing"
	"testing/fstest"

	"golang.org/x/text/language"
)

func TestTranslatesAndFallsBack(t *testing.T) {
	zh := WithLocale(context.Background(), Chinese)
	if got := T(zh, "Log out"); got != "退出登录" {
		t.Errorf("zh Log out = %q", got)
	}
	if got := T(context.Background(), "Log out"); got != "Log out" {
		t.Errorf("en Log out = %q", got)
	}
	// A key no catalog has prints as its English text, formatted.
	if got := T(zh, "no such key %s", "x"); got != "no such key x" {
		t.Errorf("missing key = %q", got)
	}
}

func TestPluralAndNumberFormatting(t *testing.T) {
	en := context.Background()
	zh := WithLocale(en, Chinese)
	for _, c := range []struct {
		ctx  context.Context
		n    int
		want string
	}{
		{en, 1, "1 GPU free"},
		{en, 3, "3 GPUs free"},
		{en, 12000, "12,000 GPUs free"},
		{zh, 1, "1 块 GPU 空闲"},
		{zh, 12000, "12,000 块 GPU 空闲"},
	} {
		if got := T(c.ctx, "%d GPUs free", c.n); got != c.want {
			t.Errorf("T(%v, %d) = %q, want %q", FromContext(c.ctx).Tag, c.n, got, c.want)
		}
	}
	// The home page's pool line on a one-GPU server read "1 GPUs, 1 free.".
	if got := T(en, "%d GPUs, %d free.", 1, 1); got != "1 GPU, 1 free." {
		t.Errorf("a one-GPU pool reads %q", got)
	}
}

func TestNegotiate(t *testing.T) {
	for _, c := range []struct {
		pref, accept string
		want         language.Tag
	}{
		{"", "", English},
		{"", "zh-CN,zh;q=0.9,en;q=0.8", Chinese},
		{"", "zh", Chinese},
		{"", "zh-Hans-CN", Chinese},
		{"", "fr-FR, de;q=0.5", English},
		{"", "en-GB,zh;q=0.5", English},
		{"en", "zh-CN", English},
		{"zh-CN", "en-US", Chinese},
		{"klingon!", "zh-CN", Chinese},
		{"", ";;;garbage", English},
	} {
		if got := Negotiate(c.pref, c.accept); got != c.want {
			t.Errorf("Negotiate(%q, %q) = %v, want %v", c.pref, c.accept, got, c.want)
		}
	}
	if Get(Chinese).Lang() != "zh-CN" || FromContext(context.Background()).Lang() != "en" {
		t.Errorf("Lang: zh %q en %q", Get(Chinese).Lang(), FromContext(context.Background()).Lang())
	}
}

func TestLoadRejectsConflictsAndBadEntries(t *testing.T) {
	for name, files := range map[string]fstest.MapFS{
		"conflict": {
			"locales/zh-CN/a.json": {Data: []byte(`{"Stop": "停止"}`)},
			"locales/zh-CN/b.json": {Data: []byte(`{"Stop": "停"}`)},
		},
		"no other case": {"locales/en/a.json": {Data: []byte(`{"%d x": {"one": "%d x"}}`)}},
		"not json":      {"locales/en/a.json": {Data: []byte(`{"a": `)}},
		"bad tag":       {"locales/xx-!!/a.json": {Data: []byte(`{}`)}},
	} {
		if _, _, err := load(files); err == nil {
			t.Errorf("%s: loaded without error", name)
		}
	}
	// The same translation in two files is fine.
	ok := fstest.MapFS{
		"locales/zh-CN/a.json": {Data: []byte(`{"Stop": "停止"}`)},
		"locales/zh-CN/b.json": {Data: []byte(`{"Stop": "停止"}`)},
	}
	if _, ks, err := load(ok); err != nil || len(ks[Chinese]) != 1 {
		t.Errorf("shared key: %v %v", ks, err)
	}
}
