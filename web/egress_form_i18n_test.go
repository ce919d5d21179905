package web_test

import (
	"net/http"
	"net/url"
	"strings"
	"testing"
)

// An admin reading Chinese who types a wrong entry into the egress form's
// "always allowed" list, or sends it without a mode, is told what is wrong
// in Chinese (the address itself quoted as typed); one reading English
// gets the English words. Nothing is saved: the form comes back with a 400.
func TestEgressFormErrorsInTheReadersLanguage(t *testing.T) {
	p := newPortal(t)
	zh, en := p.client(), p.client()
	zh.Transport = acceptLanguage{"zh-CN,zh;q=0.9", http.DefaultTransport}
	en.Transport = acceptLanguage{"en-US,en;q=0.9", http.DefaultTransport}
	p.loginSudo(zh, "admin", adminPassword)
	p.loginSudo(en, "admin", adminPassword)
	for _, c := range []struct {
		mode, allow, field, zh, en string
	}{
		{"none", "999.1.1.1", "allow", `"999.1.1.1" 不是 IPv4 地址或 CIDR（例如 10.20.0.0/16）`, `"999.1.1.1" is not an IPv4 address or CIDR such as 10.20.0.0/16`},
		{"none", "::1/64", "allow", `"::1/64" 不是 IPv4 CIDR（例如 10.20.0.0/16）`, `"::1/64" is not an IPv4 CIDR such as 10.20.0.0/16`},
		{"none", "10.1.2.3/8", "allow", `"10.1.2.3/8" 的主机位不为零；是否应为 10.0.0.0/8？`, `"10.1.2.3/8" has host bits set; did you mean 10.0.0.0/8?`},
		{"internet", "0.0.0.0/0", "allow", `"0.0.0.0/0" 会放行所有地址；请改选“全部允许”`, `"0.0.0.0/0" allows everything; choose the mode "all" instead`},
		{"", "", "mode", `请选择“仅互联网”“全部禁止”或“全部允许”`, `choose internet, none or all`},
	} {
		for _, r := range []struct {
			client *http.Client
			want   string
		}{{zh, c.zh}, {en, c.en}} {
			res, body := p.postFormBody(r.client, "/admin/egress", url.Values{"mode": {c.mode}, "allow": {c.allow}})
			if res.StatusCode != http.StatusBadRequest {
				t.Errorf("mode %q allow %q: status %d, want 400", c.mode, c.allow, res.StatusCode)
				continue
			}
			doc := parseHTML(t, body)
			if got := strings.TrimSpace(doc.Find(`[data-testid=error-` + c.field + `]`).Text()); got != r.want {
				t.Errorf("mode %q allow %q: %s error %q\n want %q", c.mode, c.allow, c.field, got, r.want)
			}
			if got := doc.Find(`[data-testid=egress-allow]`).Text(); got != c.allow {
				t.Errorf("mode %q allow %q: the form came back with %q", c.mode, c.allow, got)
			}
		}
	}
}
