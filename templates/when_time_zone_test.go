package templates_test

import (
	"context"
	"testing"
	"time"

	"workbench/templates"
	"workbench/templates/i18n"
)

// A reader who chose a time zone reads each time in UTC and, beside it,
// in their zone with its offset (the date too where it differs); a zone
// at UTC then, or none, adds nothing.
func TestWhenInShowsTheReadersZoneBesideUTC(t *testing.T) {
	zone := func(name string) *time.Location {
		loc, err := time.LoadLocation(name)
		if err != nil {
			t.Fatal(err)
		}
		return loc
	}
	en := i18n.WithLocale(context.Background(), i18n.English)
	zh := i18n.WithLocale(context.Background(), i18n.Chinese)
	morning := time.Date(2026, 12, 6, 6, 0, 0, 0, time.UTC)
	evening := time.Date(2026, 12, 6, 20, 30, 0, 0, time.UTC)
	night := time.Date(2026, 12, 6, 3, 0, 0, 0, time.UTC)
	summer := time.Date(2026, 7, 1, 12, 0, 0, 0, time.UTC)
	for _, c := range []struct {
		ctx  context.Context
		zone string
		at   time.Time
		want string
	}{
		{en, "", morning, "2026-12-06 06:00 UTC"},
		{en, "Asia/Shanghai", morning, "2026-12-06 06:00 UTC (14:00 UTC+8)"},
		{en, "Asia/Shanghai", evening, "2026-12-06 20:30 UTC (12-07 04:30 UTC+8)"},
		{en, "America/New_York", morning, "2026-12-06 06:00 UTC (01:00 UTC-5)"},
		{en, "America/New_York", night, "2026-12-06 03:00 UTC (12-05 22:00 UTC-5)"},
		{en, "Asia/Kolkata", morning, "2026-12-06 06:00 UTC (11:30 UTC+5:30)"},
		{en, "Europe/London", morning, "2026-12-06 06:00 UTC"},
		{en, "Europe/London", summer, "2026-07-01 12:00 UTC (13:00 UTC+1)"},
		{en, "UTC", morning, "2026-12-06 06:00 UTC"},
		{zh, "Asia/Shanghai", morning, "2026年12月6日 06:00 UTC（14:00 UTC+8）"},
		{zh, "Asia/Shanghai", evening, "2026年12月6日 20:30 UTC（12月7日 04:30 UTC+8）"},
	} {
		ctx := c.ctx
		if c.zone != "" {
			ctx = templates.WithTimeZone(ctx, zone(c.zone))
		}
		if got := templates.WhenIn(ctx, &c.at); got != c.want {
			t.Errorf("%s at %s: %q, want %q", c.zone, c.at, got, c.want)
		}
	}
}

// A deadline of today on the workbench page ("stops at 14:10 UTC") shows
// the reader's own time beside it too.
func TestClockInShowsTheReadersZoneBesideUTC(t *testing.T) {
	shanghai, err := time.LoadLocation("Asia/Shanghai")
	if err != nil {
		t.Fatal(err)
	}
	at := time.Date(2026, 12, 6, 9, 17, 0, 0, time.UTC)
	en := i18n.WithLocale(context.Background(), i18n.English)
	if got := templates.ClockIn(en, at); got != "09:17 UTC" {
		t.Errorf("no zone: %q", got)
	}
	if got := templates.ClockIn(templates.WithTimeZone(en, shanghai), at); got != "09:17 UTC (17:17 UTC+8)" {
		t.Errorf("Shanghai: %q", got)
	}
	zh := templates.WithTimeZone(i18n.WithLocale(context.Background(), i18n.Chinese), shanghai)
	if got := templates.ClockIn(zh, at); got != "09:17 UTC（17:17 UTC+8）" {
		t.Errorf("Shanghai in Chinese: %q", got)
	}
}
