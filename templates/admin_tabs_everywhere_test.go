package templates_test

import (
	"strings"
	"testing"

	"github.com/PuerkitoBio/goquery"
	"github.com/a-h/templ"

	"workbench/templates"
)

// Every page the admin tabs lead to shows the tabs, with its own tab
// marked: the queue and cloud prices pages had none, so an admin who
// clicked their tab had to go back through the header to reach the others.
func TestAdminTabPagesShowTheTabs(t *testing.T) {
	for path, page := range map[string]func(templates.Page) templ.Component{
		"/admin/queue": func(p templates.Page) templ.Component {
			return templates.AdminQueuePage(p, templates.AdminQueueView{})
		},
		"/admin/cloud-prices": func(p templates.Page) templ.Component {
			return templates.CloudPricesPage(p, templates.CloudPricesView{})
		},
	} {
		tabs := render(t, page(adminPage("x", path))).Find(`nav.tabs`)
		if tabs.Length() != 1 {
			t.Errorf("%s: %d admin tab bars, want 1", path, tabs.Length())
			continue
		}
		if active := tabs.Find(`a.active`); active.Length() != 1 || active.AttrOr("href", "") != path {
			t.Errorf("%s: active tab %q", path, active.AttrOr("href", ""))
		}
	}
}

// The priority classes table says yes and no in the reader's language.
func TestPriorityClassesYesNoInChinese(t *testing.T) {
	v := templates.AdminQueueView{Classes: []templates.ClassRow{{Name: "interactive", Rank: "100", Default: true}, {Name: "preemptible", Rank: "10", Preemptible: true}}}
	root := renderZh(t, templates.AdminQueuePage(adminPage("队列", "/admin/queue"), v))
	rows := root.Find(`[data-testid=class-row]`)
	if rows.Length() != 2 {
		t.Fatalf("%d class rows", rows.Length())
	}
	for i, want := range [][]string{{"interactive", "100", "否", "是"}, {"preemptible", "10", "是", "否"}} {
		var got []string
		rows.Eq(i).Find("td").Each(func(_ int, td *goquery.Selection) { got = append(got, strings.TrimSpace(td.Text())) })
		if len(got) < 4 || strings.Join(got[:4], " ") != strings.Join(want, " ") {
			t.Errorf("class row %d reads %q, want %q", i, got, want)
		}
	}
}
