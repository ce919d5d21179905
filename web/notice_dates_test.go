package web_test

import (
	"context"
	"net/http"
	"net/url"
	"strings"
	"testing"

	"github.com/PuerkitoBio/goquery"

	"workbench/models"
)

// A notice's time is worded for its reader on the notifications page: in
// Chinese, and with the reader's own zone beside UTC, as the page words
// the notice's own date. Before, the time stayed in the text as the event
// wrote it ("2026-12-06 08:22:05 UTC") inside a Chinese sentence. The
// stored text, the one the JSON API (and email, the webhook) gives, stays
// English and UTC.
func TestNoticeTimesInTheReadersLanguageAndZone(t *testing.T) {
	p := newPortal(t)
	ctx := context.Background()
	lin, err := p.srv.Store.CreateUser(ctx, models.NewUser{Username: "lin", Password: "lin-password-1", Role: models.RoleUser})
	if err != nil {
		t.Fatal(err)
	}
	zh, en := p.readersSignedIn("lin", "lin-password-1")
	if res := p.postForm(en, "/settings/time-zone", url.Values{"time_zone": {"Asia/Shanghai"}}); res.StatusCode >= 400 {
		t.Fatalf("time zone: %d", res.StatusCode)
	}
	const (
		preempt = "Workbench nb must yield its GPUs to higher-priority work: it stops at 2026-12-06 08:22:05 UTC. Save a checkpoint now; its home is kept."
		home    = "Your home volume was removed outside the portal (it was last seen at 2026-12-05 23:10 UTC): files saved there are gone, and your next workbench starts with an empty home. Ask your administrator whether a backup has them."
	)
	for _, m := range []string{home, preempt} {
		if err := p.srv.Store.AddNotification(ctx, lin.ID, m, "/settings/home"); err != nil {
			t.Fatal(err)
		}
	}
	read := func(c *http.Client) []string {
		t.Helper()
		_, body := p.get(c, "/notifications")
		var out []string
		mpDoc(t, body).Find(`[data-testid=notification]`).Each(func(_ int, s *goquery.Selection) {
			out = append(out, strings.Join(strings.Fields(s.Text()), " "))
		})
		if len(out) != 2 {
			t.Fatalf("%d notifications, want 2: %q", len(out), out)
		}
		return out // newest first
	}
	zhs := read(zh)
	for i, want := range []string{"它将于 2026年12月6日 08:22:05 UTC（16:22 UTC+8）停止", "最后一次看到它是 2026年12月5日 23:10 UTC（12月6日 07:10 UTC+8））"} {
		if !strings.Contains(zhs[i], want) {
			t.Errorf("Chinese notice %d: %q, want it to contain %q", i, zhs[i], want)
		}
		if strings.Contains(zhs[i], "2026-12-0") {
			t.Errorf("Chinese notice %d keeps the English date: %q", i, zhs[i])
		}
	}
	ens := read(en)
	for i, want := range []string{"it stops at 2026-12-06 08:22:05 UTC (16:22 UTC+8). Save", "last seen at 2026-12-05 23:10 UTC (12-06 07:10 UTC+8))"} {
		if !strings.Contains(ens[i], want) {
			t.Errorf("English notice %d: %q, want it to contain %q", i, ens[i], want)
		}
	}
	// The API gives the text as stored.
	tok := tokenFor(t, p, "lin", "user")
	code, body := p.apiBytes("GET", "/api/v1/notifications", tok, "")
	if code != http.StatusOK || !strings.Contains(string(body), "it stops at 2026-12-06 08:22:05 UTC.") {
		t.Errorf("API: %d %s", code, body)
	}
}
