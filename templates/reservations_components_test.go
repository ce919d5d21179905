package templates_test

import (
	"strings"
	"testing"

	"github.com/PuerkitoBio/goquery"

	"workbench/templates"
)

// The pool page's booking section: a bar per booking placed on the 7-day
// scale with the now-marker, the list with Cancel only where the reader may
// cancel, and the form showing the posted values with each error beside its
// field (and the scheduler's refusal above the form).
func TestReservationSectionOnGPUsPage(t *testing.T) {
	v := templates.GPUsView{Status: "simulated", Booking: templates.ReservationsView{
		Timeline: templates.Timeline{Days: []string{"Wed 12-02", "Thu 12-03", "Fri 12-04", "Sat 12-05", "Sun 12-06", "Mon 12-07", "Tue 12-08"}, NowX: "71.4",
			Rows: []templates.TimelineRow{
				{ID: 7, Label: "2 × H100 80GB HBM3", Who: "you", Window: "a → b", X: "142.9", W: "11.9", Mine: true},
				{ID: 8, Label: "1 × H100 80GB HBM3", Who: "another user", Window: "c → d", X: "0.0", W: "100.0", Active: true},
				{ID: 9, Label: "1 × H100 80GB HBM3", Who: "you", Window: "e → f", Later: true, Mine: true},
			}},
		Rows: []templates.BookingRow{
			{ID: 7, Who: "you", What: "H100 80GB HBM3", Units: 2, Start: "s", End: "e", Mine: true, CanCancel: true, Note: "course"},
			{ID: 8, Who: "another user", What: "H100 80GB HBM3", Units: 1, Start: "s", End: "e", Active: true},
		},
		Form: templates.BookingForm{
			Pools: []templates.PoolOption{
				{Value: "gpu|NVIDIA H100 80GB HBM3|", Kind: "gpu", Label: "H100 80GB HBM3", Capacity: 8},
				{Value: "mig|NVIDIA H100 80GB HBM3|1g.10gb", Kind: "mig", Label: "MIG 1g.10gb of H100 80GB HBM3", Capacity: 7},
			},
			Pool: "mig|NVIDIA H100 80GB HBM3|1g.10gb", Units: "3", StartsAt: "2026-12-02T14:00", EndsAt: "2026-12-02T13:00", Note: "exam",
			Errors: templates.FormErrors{"ends_at": "the end must be after the start", "_": "Not booked: full"},
		},
	}}
	doc := render(t, templates.GPUsPage(userPage("GPUs", "/gpus"), v))

	rows := doc.Find(testid("timeline-row"))
	if rows.Length() != 3 {
		t.Fatalf("timeline rows: %d, want 3", rows.Length())
	}
	bar := rows.Eq(0).Find(testid("timeline-bar"))
	if x, _ := bar.Attr("x"); x != "142.9" {
		t.Errorf("first bar at x=%q, want 142.9", x)
	}
	if w, _ := bar.Attr("width"); w != "11.9" {
		t.Errorf("first bar width %q, want 11.9", w)
	}
	if c, _ := bar.Attr("class"); !strings.Contains(c, "tl-mine") {
		t.Errorf("own booking's bar class %q", c)
	}
	if rows.Eq(2).Find(testid("timeline-bar")).Length() != 0 || !strings.Contains(rows.Eq(2).Text(), "starts after these 7 days") {
		t.Errorf("a booking after the 7 days: %q", squash(rows.Eq(2).Text()))
	}
	if n := doc.Find(testid("timeline-now")).Length(); n != 3 {
		t.Errorf("now-markers: %d, want one a row", n)
	}
	if x, _ := doc.Find(testid("timeline-now")).First().Attr("x1"); x != "71.4" {
		t.Errorf("now at %q", x)
	}
	if got := squash(rows.Eq(1).Find(testid("timeline-who")).Text()); got != "another user" {
		t.Errorf("other's booking reads %q", got)
	}

	list := doc.Find(testid("reservation-row"))
	if list.Length() != 2 {
		t.Fatalf("list rows: %d", list.Length())
	}
	if list.Eq(0).Find(testid("reservation-cancel")).Length() != 1 || list.Eq(1).Find(testid("reservation-cancel")).Length() != 0 {
		t.Error("Cancel must show on one's own booking only")
	}
	if a, _ := list.Eq(0).Find("form").Attr("action"); a != "/reservations/7/cancel" {
		t.Errorf("cancel action %q", a)
	}
	if list.Eq(1).Find(testid("reservation-active")).Length() != 1 {
		t.Error("the active booking has no now badge")
	}

	form := doc.Find(testid("booking-form"))
	if m, _ := form.Attr("method"); m != "post" {
		t.Errorf("form method %q", m)
	}
	if a, _ := form.Attr("action"); a != "/reservations#book" { // the refusal loads in sight
		t.Errorf("form action %q", a)
	}
	if v, _ := form.Find("select[name=pool] option[selected]").Attr("value"); v != "mig|NVIDIA H100 80GB HBM3|1g.10gb" {
		t.Errorf("chosen pool %q", v)
	}
	if n := form.Find("select[name=pool] optgroup").Length(); n != 2 {
		t.Errorf("optgroups: %d", n)
	}
	for name, want := range map[string]string{"units": "3", "starts_at": "2026-12-02T14:00", "ends_at": "2026-12-02T13:00", "note": "exam"} {
		if got, _ := form.Find("input[name=" + name + "]").Attr("value"); got != want {
			t.Errorf("%s kept as %q, want %q", name, got, want)
		}
	}
	if typ, _ := form.Find("input[name=starts_at]").Attr("type"); typ != "datetime-local" {
		t.Errorf("start input type %q", typ)
	}
	if !strings.Contains(form.Find("label:has(input[name=starts_at])").Text(), "UTC") {
		t.Error("the start's label does not say the time zone")
	}
	if got := squash(form.Find(testid("error-ends_at")).Text()); got != "the end must be after the start" {
		t.Errorf("end error %q", got)
	}
	if got := squash(form.Find(testid("booking-error")).Text()); got != "Not booked: full" {
		t.Errorf("form error %q", got)
	}

	// Nothing booked: the empty note and no timeline.
	doc = render(t, templates.GPUsPage(userPage("GPUs", "/gpus"), templates.GPUsView{}))
	if doc.Find(testid("reservations-empty")).Length() != 1 || doc.Find(testid("reservation-timeline")).Length() != 0 {
		t.Error("no bookings: want the empty note and no timeline")
	}
	if doc.Find(testid("booking-nothing")).Length() != 1 || doc.Find(testid("booking-submit")).Length() != 0 {
		t.Error("a pool with nothing to book offers a form")
	}
}

// The launch form's booking select: "none" first and chosen by default,
// each booking with the flavors it fits, the chosen one kept, and the
// backend's refusal beside the select.
func TestLaunchReservationSelect(t *testing.T) {
	v := templates.LaunchView{Reservations: []templates.ReservationOption{
		{ID: "7", Label: "#7 · 2 × H100", Flavors: []string{"1x H100 80GB HBM3", "2x H100 80GB HBM3"}},
		{ID: "9", Label: "#9 · 1 × MIG", Flavors: []string{"mig-1g"}},
	}}
	doc := render(t, templates.LaunchPage(userPage("New workbench", "/workbenches/new"), v))
	sel := doc.Find(`[data-testid=launch-form] select[name=reservation]`)
	if sel.Length() != 1 {
		t.Fatal("the launch form has no reservation select")
	}
	opts := sel.Find("option")
	if opts.Length() != 3 {
		t.Fatalf("options: %d", opts.Length())
	}
	if val, _ := opts.Eq(0).Attr("value"); val != "" || opts.Eq(0).AttrOr("selected", "no") == "no" {
		t.Errorf(`first option %q should be "none", chosen`, val)
	}
	if f, _ := opts.Eq(1).Attr("data-flavors"); f != "1x H100 80GB HBM3\n2x H100 80GB HBM3" {
		t.Errorf("data-flavors %q", f)
	}

	v.Reservation = "9"
	v.Errors = templates.FormErrors{"reservation": "Reservation: reservation #9 books MIG; the flavor asks for other units"}
	doc = render(t, templates.LaunchPage(userPage("New workbench", "/workbenches/new"), v))
	if val, _ := doc.Find("select[name=reservation] option[selected]").Attr("value"); val != "9" {
		t.Errorf("kept choice %q", val)
	}
	if got := squash(doc.Find(testid("error-reservation")).Text()); !strings.Contains(got, "asks for other units") {
		t.Errorf("reservation error %q", got)
	}

	doc = render(t, templates.LaunchPage(userPage("New workbench", "/workbenches/new"), templates.LaunchView{}))
	if doc.Find("select[name=reservation]").Length() != 0 {
		t.Error("a user without bookings gets a reservation select")
	}
}

// In Chinese the booking section (list, timeline, form, hints and the
// launch form's select) carries no English prose of its own.
func TestReservationSectionInChinese(t *testing.T) {
	v := templates.ReservationsView{
		Timeline: templates.Timeline{Days: []string{"周三 12-02"}, NowX: "10.0", Rows: []templates.TimelineRow{{ID: 7, Label: "2 × H100", Who: "你", Window: "a → b", X: "1", W: "2", Mine: true}}},
		Rows:     []templates.BookingRow{{ID: 7, Who: "你", What: "H100", Units: 2, Start: "2026年12月2日 14:00 UTC", End: "2026年12月2日 16:00 UTC", Mine: true, CanCancel: true, Active: true}},
		Form: templates.BookingForm{Pools: []templates.PoolOption{{Value: "gpu|H100|", Kind: "gpu", Label: "H100", Capacity: 8}, {Value: "slice|H100|", Kind: "slice", Label: "共享 H100 的切片", Capacity: 4}},
			Units: "1", StartsAt: "2026-12-02T14:00", EndsAt: "2026-12-02T16:00"},
	}
	lv := templates.LaunchView{Reservations: []templates.ReservationOption{{ID: "7", Label: "#7", Flavors: []string{"1x"}}}}
	for name, c := range map[string]templates.LaunchView{"launch": lv} {
		checkNoEnglish(t, name, renderZh(t, templates.LaunchReservationField(c)).Selection)
	}
	doc := renderZh(t, templates.ReservationSection(v))
	checkNoEnglish(t, "section", doc.Selection)
	for _, want := range []string{"预约资源", "开始（UTC）", "未来 7 天（UTC）"} {
		if !strings.Contains(doc.Text(), want) {
			t.Errorf("missing %q", want)
		}
	}
	if a, b := doc.Find("optgroup").Eq(0).AttrOr("label", ""), doc.Find("optgroup").Eq(1).AttrOr("label", ""); a != "整块 GPU" || b != "共享切片" {
		t.Errorf("optgroups %q, %q", a, b)
	}
}

func checkNoEnglish(t *testing.T, where string, root *goquery.Selection) {
	t.Helper()
	all := root.Find("*").AddSelection(root)
	all.Contents().Each(func(_ int, n *goquery.Selection) {
		if goquery.NodeName(n) == "#text" {
			if m := threeWords.FindString(n.Text()); m != "" {
				t.Errorf("%s: English words %q in %q", where, m, n.Text())
			}
		}
	})
	all.Each(func(_ int, e *goquery.Selection) {
		for _, a := range []string{"label", "title", "aria-label", "data-confirm", "placeholder"} {
			if v, ok := e.Attr(a); ok && threeWords.MatchString(v) {
				t.Errorf("%s: English %s %q", where, a, v)
			}
		}
	})
}
