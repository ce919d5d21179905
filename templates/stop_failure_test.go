package templates_test

import (
	"strings"
	"testing"

	"workbench/templates"
)

// A stop that failed is not shown as a stop in progress: the page says why,
// offers "Retry stop" and "Force stop" (a POST with force=true) and no
// progress bar that would sit there forever; the script's data attribute
// carries the error so a change of it reloads the page.
func TestWorkbenchPageShowsAFailedStop(t *testing.T) {
	wb := templates.WorkbenchRow{ID: "wb1", Name: "exp", State: "stopping", Progress: 0,
		StopError: "could not stop the container: engine timed out"}
	doc := render(t, templates.WorkbenchPage(userPage("exp", "/workbenches/wb1"), templates.WorkbenchView{WB: wb}))

	alert := doc.Find(testid("stop-error"))
	if alert.Length() != 1 || !strings.Contains(squash(alert.Text()), "engine timed out") {
		t.Fatalf("stop error alert: %d, %q", alert.Length(), squash(alert.Text()))
	}
	retry := doc.Find(testid("retry-stop")).Closest("form")
	if a, _ := retry.Attr("action"); a != "/workbenches/wb1/stop" || retry.Find(`input[name=force]`).Length() != 0 {
		t.Errorf("retry stop form: action %q, force inputs %d", a, retry.Find(`input[name=force]`).Length())
	}
	force := doc.Find(testid("force-stop-own")).Closest("form")
	if a, _ := force.Attr("action"); a != "/workbenches/wb1/stop" {
		t.Errorf("force stop form action %q", a)
	}
	if v, _ := force.Find(`input[name=force]`).Attr("value"); v != "true" {
		t.Errorf("force stop form sends force=%q, want true", v)
	}
	if doc.Find(testid("wb-progress")).Length() != 0 {
		t.Error("a failed stop shows a progress bar")
	}
	if doc.Find(testid("stop")).Length() != 0 {
		t.Error("a failed stop still shows the plain Stop button beside Retry stop")
	}
	if doc.Find(testid("wb-stop-failed")).Length() != 1 {
		t.Error("the state badge does not say the stop failed")
	}
	if e, _ := doc.Find(testid("wb-status")).Attr("data-stop-error"); e != wb.StopError {
		t.Errorf("data-stop-error %q, want the error", e)
	}

	// A stop under way shows its own progress, not the running state's 100 %.
	wb.StopError, wb.Progress = "", 10
	doc = render(t, templates.WorkbenchPage(userPage("exp", "/workbenches/wb1"), templates.WorkbenchView{WB: wb}))
	if doc.Find(testid("stop-error")).Length() != 0 {
		t.Error("a stop under way shows a stop error")
	}
	if v, _ := doc.Find(testid("wb-progress")).Attr("value"); v != "10" {
		t.Errorf("progress of a stop under way: %q, want 10", v)
	}
}

// The delete form offers "also delete my data", unticked, and a different
// confirmation for it.
func TestWorkbenchPageDeleteOffersDeletingData(t *testing.T) {
	wb := templates.WorkbenchRow{ID: "wb1", Name: "exp", State: "stopped"}
	doc := render(t, templates.WorkbenchPage(userPage("exp", "/workbenches/wb1"), templates.WorkbenchView{WB: wb}))
	form := doc.Find(testid("delete-form"))
	if a, _ := form.Attr("action"); a != "/workbenches/wb1/delete" {
		t.Fatalf("delete form action %q", a)
	}
	box := form.Find(testid("delete-data"))
	if n, _ := box.Attr("name"); n != "delete_data" || box.AttrOr("value", "") != "true" || box.Is("[checked]") {
		t.Errorf("delete-data box: name %q value %q checked %v", n, box.AttrOr("value", ""), box.Is("[checked]"))
	}
	if q, _ := form.Attr("data-confirm-delete-data"); !strings.Contains(q, "home volume") {
		t.Errorf("delete-data confirmation %q", q)
	}
}

// The workbench list marks a workbench whose stop failed, so it is not taken
// for one that is merely stopping.
func TestWorkbenchListMarksAFailedStop(t *testing.T) {
	rows := []templates.WorkbenchRow{
		{ID: "a", Name: "stuck", State: "stopping", StopError: "could not stop the container: engine timed out"},
		{ID: "b", Name: "on-its-way", State: "stopping", Progress: 60},
	}
	doc := render(t, templates.HomePage(userPage("Workbenches", "/"), templates.HomeView{Workbenches: rows}))
	stuck := doc.Find(`[data-testid=workbench-row][data-id=a]`)
	if b := stuck.Find(testid("wb-stop-failed")); b.Length() != 1 || b.AttrOr("title", "") != rows[0].StopError {
		t.Errorf("failed stop row: %d badges, title %q", b.Length(), b.AttrOr("title", ""))
	}
	other := doc.Find(`[data-testid=workbench-row][data-id=b]`)
	if other.Find(testid("wb-stop-failed")).Length() != 0 || !strings.Contains(other.Text(), "60%") {
		t.Errorf("stop under way row: %q", squash(other.Text()))
	}
}
