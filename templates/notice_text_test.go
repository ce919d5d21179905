package templates_test

import (
	"context"
	"strings"
	"testing"
	"time"

	"github.com/PuerkitoBio/goquery"

	"workbench/templates"
	"workbench/templates/i18n"
)

// A time written into a notice (UTC, as stored) is worded as the pages
// word times: in the reader's language, their zone beside UTC, the
// seconds kept where written; also where the translation puts "UTC"
// first. A date not said to be UTC is left as it is.
func TestNoticeTextWordsItsTimesForTheReader(t *testing.T) {
	shanghai, err := time.LoadLocation("Asia/Shanghai")
	if err != nil {
		t.Fatal(err)
	}
	en := i18n.WithLocale(context.Background(), i18n.English)
	zh := i18n.WithLocale(context.Background(), i18n.Chinese)
	for _, c := range []struct {
		ctx       context.Context
		msg, want string
	}{
		{en, "it stops at 2026-12-06 08:22:05 UTC. Save", "it stops at 2026-12-06 08:22:05 UTC. Save"},
		{en, "last seen at 2026-12-06 08:22 UTC", "last seen at 2026-12-06 08:22 UTC"},
		{templates.WithTimeZone(en, shanghai), "last seen at 2026-12-06 08:22 UTC", "last seen at 2026-12-06 08:22 UTC (16:22 UTC+8)"},
		{templates.WithTimeZone(en, shanghai), "on 2026-12-06 08:22 somewhere", "on 2026-12-06 08:22 somewhere"},
		{zh, "queued: it starts when your reservation #7 opens, at 2026-12-06 08:22 UTC", "已排队：你的预约 #7 于 2026年12月6日 08:22 UTC 开始时启动"},
		{templates.WithTimeZone(zh, shanghai), "queued: it starts when your reservation #7 opens, at 2026-12-06 20:22 UTC",
			"已排队：你的预约 #7 于 2026年12月6日 20:22 UTC（12月7日 04:22 UTC+8） 开始时启动"},
	} {
		if got := templates.NoticeText(c.ctx, c.msg); got != c.want {
			t.Errorf("%q: %q, want %q", c.msg, got, c.want)
		}
	}
}

// A queued workbench's reason words its time for the reader as a notice
// does: "which opens at … UTC" kept its English date in a Chinese page.
func TestQueueReasonWordsItsTimeForTheReader(t *testing.T) {
	shanghai, err := time.LoadLocation("Asia/Shanghai")
	if err != nil {
		t.Fatal(err)
	}
	ctx := templates.WithTimeZone(i18n.WithLocale(context.Background(), i18n.English), shanghai)
	var b strings.Builder
	w := templates.WorkbenchRow{State: "queued", QueuePosition: 1, QueueReason: "waiting for your reservation #7, which opens at 2026-12-06 20:22:00 UTC"}
	if err := templates.QueueNotice(w).Render(ctx, &b); err != nil {
		t.Fatal(err)
	}
	doc, err := goquery.NewDocumentFromReader(strings.NewReader(b.String()))
	if err != nil {
		t.Fatal(err)
	}
	if got := doc.Find(`[data-testid=queue-reason]`).Text(); !strings.Contains(got, "2026-12-06 20:22:00 UTC (12-07 04:22 UTC+8)") {
		t.Fatalf("the queue reason reads %q, without the reader's time beside UTC", got)
	}
}
