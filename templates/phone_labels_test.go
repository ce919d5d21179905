package templates_test

import (
	"slices"
	"strings"
	"testing"

	"github.com/PuerkitoBio/goquery"

	"workbench/templates"
)

// On a phone the tables' headers are hidden and each cell reads with the
// label it carries (data-label): the statement's figures and the audit
// log's columns read as bare numbers and words without them, and the
// workbench history had no headers at all.
func TestTableCellsCarryTheirLabels(t *testing.T) {
	usage := render(t, templates.UsagePage(userPage("Usage", "/usage"), templates.UsageView{Currency: "USD",
		Month:   templates.MonthNav{Action: "/usage", Value: "2026-01", Label: "January 2026", Current: true},
		Summary: []templates.StatementGroup{{Name: "train", GPUHours: "1.00", Amount: "3.50 USD"}}, Total: "3.50 USD", TotalHours: "1.00",
		Lines: []templates.StatementLine{{Period: "2026-01-02 10:00:00 – 11:00:00", Workbench: "train", Resource: "gpu", Duration: "1:00:00",
			Quantity: "1 GPU", Rate: "3.50 / GPU-hour", Amount: "3.50 USD"},
			{Period: "2026-01-03 09:00:00", Resource: "credit", Amount: "-1.00 USD"}}}))
	// A credit, of no workbench, says so rather than leaving "Workbench:"
	// empty on a phone.
	if got := strings.TrimSpace(usage.Find(testid("statement-row")).Eq(1).Find("td").Eq(1).Text()); got != "—" {
		t.Errorf("a credit's workbench cell reads %q, want —", got)
	}
	audit := render(t, templates.AdminAuditPage(adminPage("Audit log", "/admin/audit"), templates.AuditView{Rows: []templates.AuditRow{
		{At: "2026-01-02 10:00 UTC", Actor: "admin", Action: "user.create", Target: "lin", After: `{"role":"user"}`}}}))
	for what, cells := range map[string]*goquery.Selection{
		"statement summary": usage.Find(testid("summary-row") + " td.num"),
		"statement total":   usage.Find(`tr.total-row td`),
		"statement lines":   usage.Find(testid("statement-row") + " td:not(:first-child)"),
		"audit rows":        audit.Find(testid("audit-row") + " td:not(:first-child)"),
	} {
		if cells.Length() == 0 {
			t.Errorf("%s: no cells found", what)
		}
		cells.Each(func(i int, td *goquery.Selection) {
			if label, _ := td.Attr("data-label"); label == "" {
				t.Errorf("%s: cell %d (%q) has no data-label", what, i, td.Text())
			}
		})
	}
}

// The link to the page being read says so to a screen reader
// (aria-current="page"), not only by its colour: the main navigation,
// the admin tabs and the settings tabs.
func TestCurrentPageLinkIsMarked(t *testing.T) {
	doc := render(t, templates.AdminAuditPage(adminPage("Audit log", "/admin/audit"), templates.AuditView{}))
	var marked []string
	doc.Find(`a[aria-current="page"]`).Each(func(_ int, a *goquery.Selection) {
		href, _ := a.Attr("href")
		marked = append(marked, href)
	})
	// The audit tab, and the main navigation's Admin section it is in.
	if !slices.Equal(marked, []string{"/admin/users", "/admin/audit"}) {
		t.Errorf("links marked current: %q", marked)
	}
}

// The launch form's image and hardware cards are radio groups named by
// their headings ("2. Hardware"): a screen reader read each option
// without the question it answers. Each card's calculator link names its
// flavor (six links all read "cost over time").
func TestLaunchChoicesAreNamedGroups(t *testing.T) {
	v := templates.LaunchView{Images: []templates.ImageCard{{Name: "pytorch"}},
		Flavors: []templates.FlavorRow{{Name: "1x H100", GPUCount: 1}, {Name: "CPU small"}}}
	doc := render(t, templates.LaunchPage(userPage("New workbench", "/workbenches/new"), v))
	for _, name := range []string{"image", "flavor"} {
		group := doc.Find(`input[name=` + name + `]`).First().Closest(`[role=radiogroup]`)
		id, _ := group.Attr("aria-labelledby")
		if group.Length() != 1 || id == "" || doc.Find("#"+id).Length() != 1 {
			t.Errorf("the %s choices are not a radio group named by a heading", name)
		}
	}
	var names []string
	doc.Find(testid("flavor-calculator")).Each(func(_ int, a *goquery.Selection) {
		n, _ := a.Attr("aria-label")
		names = append(names, n)
	})
	if !slices.Equal(names, []string{"cost over time of 1x H100", "cost over time of CPU small"}) {
		t.Errorf("calculator links named %q", names)
	}
}

// A new password's rule is said beside it and tied to the field: it was
// enforced only by the browser's bubble after a failed submit.
func TestNewPasswordSaysItsMinimum(t *testing.T) {
	doc := render(t, templates.PasswordPage(userPage("Password", "/settings/password"), templates.PasswordView{}))
	in := doc.Find(`input[name=new_password]`)
	id, _ := in.Attr("aria-describedby")
	if hint := doc.Find("#" + id).Text(); id == "" || hint != "at least 10 characters" {
		t.Errorf("new password described by %q: %q", id, hint)
	}
}
