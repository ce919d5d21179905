package web_test

import (
	"context"
	"net/http"
	"net/url"
	"strings"
	"testing"
	"time"

	"github.com/PuerkitoBio/goquery"
	"github.com/chromedp/cdproto/cdp"
	"github.com/chromedp/cdproto/emulation"
	"github.com/chromedp/chromedp"
)

// tokenCreatedAt gives username an API token and returns when it was made,
// the time the tokens page shows.
func tokenCreatedAt(t *testing.T, p *testPortal, username string) time.Time {
	t.Helper()
	tokenFor(t, p, username, "user")
	u, err := p.srv.Store.UserByUsername(context.Background(), username)
	if err != nil {
		t.Fatal(err)
	}
	toks, err := p.srv.Store.ListTokens(context.Background(), u.ID)
	if err != nil || len(toks) == 0 {
		t.Fatalf("tokens %v (%v)", toks, err)
	}
	return toks[0].CreatedAt
}

// besideUTCText is how an English page writes at in UTC with the time in
// zone (whose offset then is offset) beside it.
func besideUTCText(t *testing.T, at time.Time, zone, offset string) string {
	t.Helper()
	loc, err := time.LoadLocation(zone)
	if err != nil {
		t.Fatal(err)
	}
	local := at.In(loc).Format("15:04")
	if at.In(loc).YearDay() != at.UTC().YearDay() {
		local = at.In(loc).Format("01-02 15:04")
	}
	return at.UTC().Format("2006-01-02 15:04 UTC") + " (" + local + " " + offset + ")"
}

// On the time zone page, a zone that is none is refused beside the field,
// what was typed kept and nothing saved; a real one is saved, audited, and
// every page then shows times in it beside UTC; emptying it goes back to
// UTC only.
func TestTimeZonePageSetsTheZoneTimesAreShownIn(t *testing.T) {
	p := newPortal(t)
	ctx := context.Background()
	made := tokenCreatedAt(t, p, "erin")
	c := p.client()
	p.login(c, "erin", "erin-password")

	res, body := p.postFormBody(c, "/settings/time-zone", url.Values{"time_zone": {"Mars/Olympus_Mons"}})
	doc, err := goquery.NewDocumentFromReader(strings.NewReader(body))
	if err != nil {
		t.Fatal(err)
	}
	if res.StatusCode != http.StatusBadRequest || !strings.Contains(doc.Find(`.field-error[data-field=time_zone]`).Text(), "not a time zone") {
		t.Fatalf("a zone that is none: %d, error %q", res.StatusCode, doc.Find(`.field-error`).Text())
	}
	if v, _ := doc.Find(`[data-testid=time-zone]`).Attr("value"); v != "Mars/Olympus_Mons" {
		t.Errorf("the field after the refusal holds %q", v)
	}
	if u, _ := p.srv.Store.UserByUsername(ctx, "erin"); u.TimeZone != "" {
		t.Errorf("a refused zone was saved: %q", u.TimeZone)
	}

	if res := p.postForm(c, "/settings/time-zone", url.Values{"time_zone": {" Asia/Shanghai "}}); res.StatusCode != http.StatusSeeOther {
		t.Fatalf("saving Asia/Shanghai: %d", res.StatusCode)
	}
	if u, _ := p.srv.Store.UserByUsername(ctx, "erin"); u.TimeZone != "Asia/Shanghai" {
		t.Errorf("stored zone %q", u.TimeZone)
	}
	if es, _, err := p.srv.Store.AuditPage(ctx, "user.time_zone", "erin", 0, 10); err != nil || len(es) != 1 {
		t.Errorf("audit %+v (%v)", es, err)
	}
	want := besideUTCText(t, made, "Asia/Shanghai", "UTC+8")
	if _, page := p.get(c, "/settings/tokens"); !strings.Contains(page, want) {
		t.Errorf("the tokens page does not show %q", want)
	}
	if _, page := p.get(c, "/settings/time-zone"); !strings.Contains(page, `value="Asia/Shanghai"`) {
		t.Error("the time zone page does not show the saved zone")
	}

	if res := p.postForm(c, "/settings/time-zone", url.Values{"time_zone": {""}}); res.StatusCode != http.StatusSeeOther {
		t.Fatalf("emptying the zone: %d", res.StatusCode)
	}
	if _, page := p.get(c, "/settings/tokens"); strings.Contains(page, "UTC+8") || !strings.Contains(page, made.UTC().Format("2006-01-02 15:04 UTC")) {
		t.Error("with no zone the tokens page still shows another zone, or no UTC time")
	}
}

// PATCH /api/v1/me sets the zone for a script: GET /me says it; a zone
// that is none is a 400 with a code and changes nothing, the email choice
// sent with it included.
func TestAPIMeSetsTheTimeZone(t *testing.T) {
	p := newPortal(t)
	tok := tokenFor(t, p, "erin", "user")
	if code, me := p.api("PATCH", "/api/v1/me", tok, `{"time_zone": "Europe/Berlin"}`); code != http.StatusOK || me["time_zone"] != "Europe/Berlin" {
		t.Fatalf("PATCH: %d %v", code, me)
	}
	code, res := p.api("PATCH", "/api/v1/me", tok, `{"time_zone": "Local", "email_workbench_notices": false}`)
	if code != http.StatusBadRequest || errCode(res) != "invalid_time_zone" {
		t.Fatalf("PATCH Local: %d %v", code, res)
	}
	if _, me := p.api("GET", "/api/v1/me", tok, ""); me["time_zone"] != "Europe/Berlin" || me["email_workbench_notices"] != true {
		t.Fatalf("after a refused PATCH: %v %v", me["time_zone"], me["email_workbench_notices"])
	}
}

// In Chromium, with JavaScript on and off: a person opens Time zone from
// the settings tabs, sets a zone (with JavaScript, the button that takes
// the browser's own zone; without, typed), saves, and reads the time of
// their token in that zone beside UTC.
func TestBrowserTimeZoneIsChosenAndShown(t *testing.T) {
	for _, js := range []bool{true, false} {
		name := "javascript=false"
		if js {
			name = "javascript=true"
		}
		t.Run(name, func(t *testing.T) {
			p := newPortal(t)
			made := tokenCreatedAt(t, p, "erin")
			b := btSignedIn(t, js, p.ts.URL, "erin", "erin-password")
			zone, offset := "Asia/Kolkata", "UTC+5:30"
			if js {
				zone, offset = "Asia/Shanghai", "UTC+8"
				btDo(t, b, "run the browser in Shanghai's zone", chromedp.Func(func(ctx context.Context, tg *chromedp.Target) error {
					_, err := cdp.Call(ctx, tg, emulation.SetTimezoneOverride, emulation.SetTimezoneOverrideParams{TimezoneID: zone})
					return err
				}))
			}
			btNavigate(t, b, p.ts.URL+"/settings/tokens")
			btSubmit(t, b, "open the Time zone tab", chromedp.Click(chromedp.CSS(`[data-testid=time-zone-link]`)))
			if js {
				btDo(t, b, "take the browser's zone",
					chromedp.WaitVisible(chromedp.CSS(`[data-testid=time-zone-browser]`)),
					chromedp.Click(chromedp.CSS(`[data-testid=time-zone-browser]`)))
				if got := btValue(t, b, `[data-testid=time-zone]`); got != zone {
					t.Fatalf("the button put %q in the field, want %q", got, zone)
				}
			} else {
				if btVisible(t, b, `[data-testid=time-zone-browser]`) {
					t.Error("without JavaScript the browser-zone button is shown, and does nothing")
				}
				btDo(t, b, "type the zone", chromedp.SendKeys(chromedp.CSS(`[data-testid=time-zone]`), zone))
			}
			btSubmit(t, b, "click Save", chromedp.Click(chromedp.CSS(`[data-testid=time-zone-submit]`)))
			if got := btText(t, b, `[data-testid=flash]`); !strings.Contains(got, zone) {
				t.Errorf("after Save the page says %q", got)
			}
			btSubmit(t, b, "open the API tokens tab", chromedp.Click(chromedp.CSS(`[data-testid=tokens-link]`)))
			want := besideUTCText(t, made, zone, offset)
			if got := btText(t, b, `main`); !strings.Contains(got, want) {
				t.Errorf("the tokens page does not show %q:\n%s", want, got)
			}
			if u, _ := p.srv.Store.UserByUsername(context.Background(), "erin"); u.TimeZone != zone {
				t.Errorf("stored zone %q", u.TimeZone)
			}
		})
	}
}
