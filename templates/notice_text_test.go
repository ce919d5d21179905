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
			"已排队：你的预约 #7 于 2026年12月6日 20:22 UTC（12月7日 04:22 UTC+8）开始时启动"},
		// Without a zone beside it "UTC" keeps its space from the Chinese;
		// English keeps its own.
		{templates.WithTimeZone(en, shanghai), "Workbench overnight stops at 2026-12-06 08:22 UTC, when your monthly limit is reached. Save your work.",
			"Workbench overnight stops at 2026-12-06 08:22 UTC (16:22 UTC+8), when your monthly limit is reached. Save your work."},
	} {
		if got := templates.NoticeText(c.ctx, c.msg); got != c.want {
			t.Errorf("%q: %q, want %q", c.msg, got, c.want)
		}
	}
}

// The stop and preempt notices read in Chinese with no space after the
// full-width parenthesis of the reader's time: the translation spaces
// "UTC" from the Chinese word after it ("%s UTC 停止"), and the page and
// the email said "UTC（16:22 UTC+8） 停止".
func TestNoticeTextChineseHasNoSpaceAfterFullWidthParenthesis(t *testing.T) {
	shanghai, err := time.LoadLocation("Asia/Shanghai")
	if err != nil {
		t.Fatal(err)
	}
	zh := templates.WithTimeZone(i18n.WithLocale(context.Background(), i18n.Chinese), shanghai)
	for msg, want := range map[string]string{
		"Workbench overnight must yield its GPUs to higher-priority work: it stops at 2026-12-06 08:22:05 UTC. Save a checkpoint now; its home is kept.": "工作台 overnight 必须把 GPU 让给更高优先级的工作：它将于 2026年12月6日 08:22:05 UTC（16:22 UTC+8）停止。请立即保存检查点；它的主目录会保留。",
		"Workbench overnight stops at 2026-12-06 08:22 UTC, when your monthly limit is reached. Save your work.":                                         "工作台 overnight 将于 2026年12月6日 08:22 UTC（16:22 UTC+8）停止，届时你的每月限额将用完。请保存你的工作。",
	} {
		if got := templates.NoticeText(zh, msg); got != want {
			t.Errorf("%q:\n got %q\nwant %q", msg, got, want)
		}
	}
	// A reader without a zone: "UTC" is Latin, spaced from the Chinese.
	zhUTC := i18n.WithLocale(context.Background(), i18n.Chinese)
	if got, want := templates.NoticeText(zhUTC, "Workbench overnight stops at 2026-12-06 08:22 UTC, when your monthly limit is reached. Save your work."),
		"工作台 overnight 将于 2026年12月6日 08:22 UTC 停止，届时你的每月限额将用完。请保存你的工作。"; got != want {
		t.Errorf("without a zone:\n got %q\nwant %q", got, want)
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

// A refusal's dates are worded for its reader: its UTC times as a
// notice's, and (all its dates being UTC) its days and months too: a
// Chinese booking refusal said "2026-12-15 00:00 UTC" and "2026-12" where
// the calculator and the tables say "2026年12月20日". A date inside a
// longer token (a group's name) is left as written.
func TestRefusalDatesAreWordedForTheReader(t *testing.T) {
	shanghai, err := time.LoadLocation("Asia/Shanghai")
	if err != nil {
		t.Fatal(err)
	}
	en := i18n.WithLocale(context.Background(), i18n.English)
	zh := templates.WithTimeZone(i18n.WithLocale(context.Background(), i18n.Chinese), shanghai)
	for _, c := range []struct {
		ctx       context.Context
		msg, want string
	}{
		{en, "nothing can be launched on a booking before 2027-01-01 00:00 UTC; book from then", "nothing can be launched on a booking before 2027-01-01 00:00 UTC; book from then"},
		{templates.WithTimeZone(en, shanghai), "before 2027-01-01 00:00 UTC; book", "before 2027-01-01 00:00 UTC (08:00 UTC+8); book"},
		{en, "would be billed 12.00 USD in 2026-12 (unused", "would be billed 12.00 USD in December 2026 (unused"},
		{en, "in the week of 2026-12-14; your limit", "in the week of 2026-12-14; your limit"},
		{zh, "你本月的预算已用完，因此 2027-01-01 00:00 UTC 之前", "你本月的预算已用完，因此 2027年1月1日 00:00 UTC（08:00 UTC+8）之前"},
		{zh, "此预约将在 2026-12-14 那一周预约", "此预约将在 2026年12月14日 那一周预约"},
		{zh, "将在 2026-12 计费 12.00 USD", "将在 2026年12月 计费 12.00 USD"},
		{zh, "组 cohort-2026-12 在", "组 cohort-2026-12 在"},
		{zh, "版本 v2026-12.1 与 2026-13", "版本 v2026-12.1 与 2026-13"},
	} {
		if got := templates.RefusalDates(c.ctx, c.msg); got != c.want {
			t.Errorf("%q:\n got %q\nwant %q", c.msg, got, c.want)
		}
	}
	// A notice's bare days and months stay as written (not known to be UTC).
	if got := templates.NoticeText(zh, "in 2026-12 on 2026-12-14"); got != "in 2026-12 on 2026-12-14" {
		t.Errorf("a notice's bare dates reworded: %q", got)
	}
}
