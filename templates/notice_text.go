package templates

import (
	"context"
	"fmt"
	"regexp"
	"time"

	"workbench/templates/i18n"
)

// noticeTime finds a time the layers below the handlers wrote into a
// notice, in UTC as every stored text has it ("it stops at 2026-12-06
// 08:22:05 UTC", "last seen at 2026-12-06 08:22 UTC"), also where a
// translation put "UTC" before it ("于 UTC 2026-12-06 08:22 开始"). A date
// without "UTC" on either side is left alone: it is not known to be one.
var noticeTime = regexp.MustCompile(`(UTC )?\b(\d{4}-\d{2}-\d{2} \d{2}:\d{2})(:\d{2})?\b( UTC)?`)

// NoticeText is a notification's message for its reader: translated
// (i18n.Reason), and each time in it written as WhenIn writes times, in
// the reader's language and with their own zone beside UTC ("2026年12月6日
// 08:22 UTC（16:22 UTC+8）"). The message is stored as the event wrote it,
// English and UTC, the text email and the webhook send; it is the page
// that words the time for whoever reads it, as it does the notice's own
// date. Seconds written are kept (a preemption's deadline).
func NoticeText(ctx context.Context, msg string) string {
	return noticeTime.ReplaceAllStringFunc(i18n.Reason(ctx, msg), func(m string) string {
		sub := noticeTime.FindStringSubmatch(m)
		if sub[1] == "" && sub[4] == "" {
			return m
		}
		layout := "2006-01-02 15:04"
		clock := "15:04"
		if sub[3] != "" {
			layout += ":05"
			clock += ":05"
		}
		t, err := time.Parse(layout, sub[2]+sub[3])
		if err != nil {
			return m
		}
		return whenIn(ctx, t, clock)
	})
}

// whenIn is WhenIn with the UTC clock written as clock ("15:04" or
// "15:04:05").
func whenIn(ctx context.Context, t time.Time, clock string) string {
	english := i18n.FromContext(ctx).Tag == i18n.English
	u := t.UTC()
	out := u.Format("2006-01-02 " + clock + " UTC")
	if !english {
		out = fmt.Sprintf("%d年%d月%d日 %s UTC", u.Year(), int(u.Month()), u.Day(), u.Format(clock))
	}
	return out + besideText(ctx, u, english)
}
