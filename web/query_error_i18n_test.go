package web_test

import (
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/chromedp/chromedp"
)

// TestBadAddressValuesInTheReadersLanguage: a bad value in a page's
// address (?page=x, ?month=abc) is a 400 whose message a Chinese reader
// reads in Chinese, the parameter named as typed; an English reader gets
// the English, as before.
func TestBadAddressValuesInTheReadersLanguage(t *testing.T) {
	p := newPortal(t)
	zh, en := p.readersSignedIn("admin", adminPassword)
	// The example month is the portal's current one (read just before, so
	// a run across midnight at a month's end is the only way to miss).
	thisMonth := time.Now().UTC().Format("2006-01")
	for _, tc := range []struct{ path, zh, en string }{
		{"/admin/users?page=x", "page：必须是页码（1、2、…）", "page: must be a page number (1, 2, …)"},
		{"/admin/audit?page=0", "page：必须是页码（1、2、…）", "page: must be a page number (1, 2, …)"},
		{"/admin/billing?month=abc", "month：请使用 YYYY-MM 格式，例如 " + thisMonth, "month: use YYYY-MM, e.g. " + thisMonth},
		{"/usage?month=abc", "month：请使用 YYYY-MM 格式，例如 " + thisMonth, "month: use YYYY-MM, e.g. " + thisMonth},
		{"/admin/billing.csv?group_by=x", "group_by：必须是 user、group、gpu_model、workbench 或 resource", "group_by: must be user, group, gpu_model, workbench or resource"},
		{"/admin/utilisation?bucket=year", "bucket：必须是 day、week 或 month", "bucket: must be day, week or month"},
		{"/admin/utilisation?from=2020-01-01&to=2026-01-01", "from：一次最多 400 天", "from: at most 400 days at a time"},
		{"/admin/utilisation?from=2026-12-01&to=2026-12-01", "to：必须晚于 from", "to: must be after from"},
		{"/admin/utilisation?from=abc", "from：请使用 YYYY-MM-DD 格式", "from: use YYYY-MM-DD"},
		{"/admin/reservations/unused.csv?from=x", "from：请填写日期 YYYY-MM-DD 或 RFC 3339 时间", "from: a date YYYY-MM-DD or an RFC 3339 time"},
		{"/admin/workbenches?state=bogus", "state：不是工作台状态", "state: is not a workbench state"},
		{"/usage.csv?from=x", "from：不是此地址的参数（可用参数：month）", "from: is not a parameter of this endpoint (it takes: month)"},
		// A typo in an admin export's address gave this month's figures
		// under this month's file name.
		{"/admin/billing.csv?montth=2026-11", "montth：不是此地址的参数（可用参数：month, group_by）", "montth: is not a parameter of this endpoint (it takes: month, group_by)"},
		{"/admin/utilisation.csv?form=2026-11-01", "form：不是此地址的参数（可用参数：bucket, from, to）", "form: is not a parameter of this endpoint (it takes: bucket, from, to)"},
		{"/admin/reservations/unused.csv?since=2026-11-01", "since：不是此地址的参数（可用参数：from, to）", "since: is not a parameter of this endpoint (it takes: from, to)"},
		{"/admin/billing.csv?month=2026-11&month=2026-10", "month：重复给出了多次；请只给一次", "month: is given more than once; give it once"},
	} {
		for _, r := range []struct {
			c    *http.Client
			want string
		}{{zh, tc.zh}, {en, tc.en}} {
			res, body := p.get(r.c, tc.path)
			doc := mpDoc(t, body)
			got := strings.Join(strings.Fields(doc.Find(`[data-testid=error] p`).First().Text()), " ")
			if strings.HasPrefix(tc.path, "/admin/utilisation?") {
				// The utilisation page keeps its form: the message is
				// beside the field, the dates as typed.
				sep := ": "
				if r.c == zh {
					sep = "："
				}
				field, _, _ := strings.Cut(r.want, sep)
				got = field + sep + strings.TrimSpace(doc.Find(`[data-testid=error-`+field+`]`).Text())
				from, _ := doc.Find(`[data-testid=utilisation-filter] input[name=from]`).Attr("value")
				if strings.Contains(tc.path, "from=") && !strings.Contains(tc.path, "from="+from+"&") && !strings.HasSuffix(tc.path, "from="+from) {
					t.Errorf("GET %s: the form lost the date typed (from %q)", tc.path, from)
				}
			}
			if res.StatusCode != http.StatusBadRequest || got != r.want {
				t.Errorf("GET %s: %d %q\nwant 400 %q", tc.path, res.StatusCode, got, r.want)
			}
		}
	}
}

// TestCalculatorPercentWithoutItsSign: "50" typed as the utilisation says
// how it is read and both ways to write it, in the reader's language
// (it said "must be more than 0 and at most 100%").
func TestCalculatorPercentWithoutItsSign(t *testing.T) {
	p := newPortal(t)
	zh, en := p.readersSignedIn("admin", adminPassword)
	for _, r := range []struct {
		c    *http.Client
		want string
	}{{en, "50 would be 5000%: write a fraction (0.5) or a percentage (50%)"}, {zh, "50 会被读作 5000%：请写成小数（0.5）或百分数（50%）"}} {
		_, body := p.get(r.c, "/calculator?utilization=50#tco")
		if got := strings.TrimSpace(mpDoc(t, body).Find(`[data-testid=error-utilization]`).Text()); got != r.want {
			t.Errorf("utilization=50: %q, want %q", got, r.want)
		}
	}
}

// TestBrowserUtilisationPeriodMistake: with JavaScript on and off, an admin
// picks a "to" date equal to "from" on the utilisation page and clicks
// Show: the page says "must be after from" beside the field and keeps both
// dates (it was a bare error page, the dates gone).
func TestBrowserUtilisationPeriodMistake(t *testing.T) {
	for _, js := range []bool{true, false} {
		t.Run(jsName(js), func(t *testing.T) {
			p, b := btAdminIn(t, js)
			btNavigate(t, b, p.ts.URL+"/admin/utilisation")
			btDo(t, b, "pick the dates",
				chromedp.SetValue(chromedp.CSS(`[data-testid=utilisation-filter] input[name=from]`), "2026-11-02"),
				chromedp.SetValue(chromedp.CSS(`[data-testid=utilisation-filter] input[name=to]`), "2026-11-02"))
			resp := btSubmit(t, b, "click Show", chromedp.Click(chromedp.CSS(`[data-testid=utilisation-filter] button[type=submit]`)))
			if resp.Status != http.StatusBadRequest {
				t.Fatalf("show: status %d, want 400", resp.Status)
			}
			if got := btText(t, b, `[data-testid=error-to]`); got != "must be after from" {
				t.Errorf("message %q, want \"must be after from\"", got)
			}
			for _, name := range []string{"from", "to"} {
				v, err := chromedp.Run(b, chromedp.Value(chromedp.CSS(`[data-testid=utilisation-filter] input[name=`+name+`]`)))
				if err != nil || v != "2026-11-02" {
					t.Errorf("%s holds %q (%v), want the date picked", name, v, err)
				}
			}
		})
	}
}
