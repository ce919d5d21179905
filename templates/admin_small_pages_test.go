package templates_test

import (
	"strings"
	"testing"

	"workbench/templates"
)

// An audit filter that matches nothing says so (the table stood empty
// under its headers); with no filter, that nothing was recorded yet.
func TestAuditPageSaysWhenNothingMatches(t *testing.T) {
	doc := render(t, templates.AdminAuditPage(adminPage("Audit log", "/admin/audit"), templates.AuditView{Actor: "nobody"}))
	if got := doc.Find(testid("audit-empty")).Text(); !strings.Contains(got, "No audit entry matches this filter.") {
		t.Errorf("empty filtered audit: %q", got)
	}
	doc = render(t, templates.AdminAuditPage(adminPage("Audit log", "/admin/audit"), templates.AuditView{}))
	if got := doc.Find(testid("audit-empty")).Text(); !strings.Contains(got, "Nothing has been recorded yet.") {
		t.Errorf("empty audit: %q", got)
	}
	doc = render(t, templates.AdminAuditPage(adminPage("Audit log", "/admin/audit"), templates.AuditView{Rows: []templates.AuditRow{{Action: "user.create"}}}))
	if doc.Find(testid("audit-empty")).Length() != 0 {
		t.Error("an audit with rows says it is empty")
	}
}

// The egress status reads "enforced Rules are in place…", not
// "enforcedRules are in place…".
func TestEgressStatusBadgeStandsApart(t *testing.T) {
	doc := render(t, templates.AdminEgressPage(adminPage("Network egress", "/admin/egress"), templates.EgressView{Mode: "internet", Enforced: true,
		Bridge: "br-1", CheckedAt: "2026-12-05 20:43 UTC"}))
	got := strings.Join(strings.Fields(doc.Find(testid("egress-status")).Text()), " ")
	if !strings.Contains(got, "enforced Rules are in place") || !strings.Contains(got, "checked 2026-12-05 20:43 UTC") {
		t.Errorf("egress status %q", got)
	}
}
