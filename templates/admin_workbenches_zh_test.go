package templates_test

import (
	"strings"
	"testing"

	"workbench/templates"
)

// The admin's workbench list in Chinese offers its state filter in
// Chinese: the choices are the states the list shows translated in every
// row, not their English identifiers (those stay the submitted values).
func TestAdminWorkbenchStateFilterInChinese(t *testing.T) {
	p := templates.Page{Title: "x", Path: "/admin/workbenches", User: &templates.NavUser{Username: "root", IsAdmin: true}}
	v := templates.AdminWorkbenchesView{State: "running", States: []string{"queued", "running", "failed"}}
	opts := zhMain(t, templates.AdminWorkbenchesPage(p, v)).Find("#wb-state option")
	want := map[string]string{"": "全部", "queued": "排队中", "running": "运行中", "failed": "失败"}
	if opts.Length() != len(want) {
		t.Fatalf("%d choices, want %d", opts.Length(), len(want))
	}
	for i := range opts.Length() {
		o := opts.Eq(i)
		value, _ := o.Attr("value")
		if got := strings.TrimSpace(o.Text()); got != want[value] {
			t.Errorf("state %q is offered as %q, want %q", value, got, want[value])
		}
	}
	if sel, _ := opts.Filter("[selected]").Attr("value"); sel != "running" {
		t.Errorf("the chosen filter is %q, want running", sel)
	}
}
