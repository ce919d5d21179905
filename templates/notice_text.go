package templates

import (
	"context"
	"fmt"
	"regexp"
	"strings"
	"time"
	"unicode/utf8"

	"workbench/templates/i18n"
)

// storedDate finds a date the layers below the handlers wrote into a text,
// in UTC as every stored text has it: a time ("it stops at 2026-12-06
// 08:22:05 UTC", "last seen at 2026-12-06 08:22 UTC", also where a
// translation put "UTC" before it: "于 UTC 2026-12-06 08:22 开始"), a day
// ("the week of 2026-12-14") or a month ("billed 12.00 USD in 2026-12").
// Which of them are reworded is the caller's (readerDates).
var storedDate = regexp.MustCompile(`(UTC )?(\d{4})-(\d{2})(?:-(\d{2})(?: (\d{2}:\d{2})(:\d{2})?)?)?( UTC)?`)

// NoticeText is a notification's message for its reader: translated
// (i18n.Reason), and each time in it written as WhenIn writes times, in
// the reader's language and with their own zone beside UTC ("2026年12月6日
// 08:22 UTC（16:22 UTC+8）"). The message is stored as the event wrote it,
// English and UTC, the text email and the webhook send; it is the page
// that words the time for whoever reads it, as it does the notice's own
// date. Seconds written are kept (a preemption's deadline). A date or time
// without "UTC" on either side is left alone: it is not known to be one.
func NoticeText(ctx context.Context, msg string) string {
	return readerDates(ctx, i18n.Reason(ctx, msg), false)
}

// RefusalDates words the dates in a refusal the models wrote (a booking's:
// "… before 2027-01-01 00:00 UTC", "the week of 2026-12-14", "in 2026-12"),
// text already in the reader's language, as the pages word dates: a time
// as NoticeText words it, a day and a month in the reader's language
// ("2026年12月14日", "2026年12月"; a month "December 2026" in English, as
// the statements name it). The models write every date of a refusal in
// UTC, so a day or a month without "UTC" beside it is reworded too; the
// stored and API text keeps them as written.
func RefusalDates(ctx context.Context, text string) string {
	return readerDates(ctx, text, true)
}

// WhenToTheSecond is WhenIn with the seconds of the UTC time kept
// ("2026-12-06 08:22:05 UTC (16:22 UTC+8)"): a change at 02:13:32 said
// "from 02:13" to someone stopping at 02:13:10.
func WhenToTheSecond(ctx context.Context, t time.Time) string {
	return whenIn(ctx, t, "15:04:05")
}

// readerDates rewords the UTC times in text for the reader and, when bare,
// the days and months too. A match inside a longer token (a name such as
// "cohort-2026-12", a version) is left alone.
func readerDates(ctx context.Context, text string, bare bool) string {
	english := i18n.FromContext(ctx).Tag == i18n.English
	var b strings.Builder
	last := 0
	for _, m := range storedDate.FindAllStringSubmatchIndex(text, -1) {
		start, end := m[0], m[1]
		if (start > 0 && inToken(text[start-1], true)) || (end < len(text) && inToken(text[end], false)) {
			continue
		}
		sub := func(i int) string {
			if m[2*i] < 0 {
				return ""
			}
			return text[m[2*i]:m[2*i+1]]
		}
		pre, year, month, day, clock, secs, post := sub(1), sub(2), sub(3), sub(4), sub(5), sub(6), sub(7)
		var out string
		switch {
		case clock != "":
			if pre == "" && post == "" {
				continue
			}
			layout, format := "2006-01-02 15:04", "15:04"
			if secs != "" {
				layout, format = layout+":05", format+":05"
			}
			t, err := time.Parse(layout, year+"-"+month+"-"+day+" "+clock+secs)
			if err != nil {
				continue
			}
			out = whenIn(ctx, t, format)
		case !bare:
			continue
		case day != "":
			t, err := time.Parse("2006-01-02", year+"-"+month+"-"+day)
			if err != nil {
				continue
			}
			out = t.Format("2006-01-02")
			if !english {
				out = fmt.Sprintf("%d年%d月%d日", t.Year(), int(t.Month()), t.Day())
			}
			out = pre + out + post
		default:
			t, err := time.Parse("2006-01", year+"-"+month)
			if err != nil {
				continue
			}
			out = pre + monthIn(ctx, t) + post
		}
		if strings.HasSuffix(out, "）") && end+1 < len(text) && text[end] == ' ' && text[end+1] >= utf8.RuneSelf {
			// The translation spaces Chinese from "UTC" ("%s UTC 停止"),
			// but the reader's time now ends the date in a full-width
			// parenthesis, and Chinese puts no space around full-width
			// punctuation: "UTC（16:22 UTC+8）停止", not "…） 停止".
			end++
		}
		b.WriteString(text[last:start])
		b.WriteString(out)
		last = end
	}
	b.WriteString(text[last:])
	return b.String()
}

// inToken says whether c, just before (or after) a date, makes it part of
// a longer token: a letter or digit, or a character names and versions
// join with. A full stop after a date ends a sentence.
func inToken(c byte, before bool) bool {
	switch {
	case 'a' <= c && c <= 'z', 'A' <= c && c <= 'Z', '0' <= c && c <= '9':
		return true
	case c == '-' || c == '_' || c == '/' || c == ':':
		return true
	}
	return before && c == '.'
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
