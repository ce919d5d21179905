package templates_test

import (
	"strings"
	"testing"

	"workbench/templates"
)

// A saved image's size is what saving added over the image it was
// launched from (what the quota counts): a save that changed nothing read
// "Size 0 KiB" for a 6.5 MB image, which looked broken.
func TestSavedImagesPageSaysWhatTheSizeIs(t *testing.T) {
	v := templates.SavedImagesView{Used: "0 KiB", Quota: "10.00 GiB",
		Items: []templates.SavedImageRow{{ID: 7, Name: "exp1 (saved)", Size: "0 KiB", Created: "2026-12-05 19:50 UTC"}}}
	doc := render(t, templates.SavedImagesPage(userPage("My images", "/images/saved"), v))
	head := doc.Find(`[data-testid=saved-images] thead th.num`)
	if got := strings.TrimSpace(head.Text()); got != "Added over its base" {
		t.Errorf("size column %q, want it to say what the figure is", got)
	}
	if title, _ := head.Attr("title"); !strings.Contains(title, "counts against your quota") {
		t.Errorf("size column title %q", title)
	}
	if q := doc.Find(testid("saved-images-quota")).Text(); !strings.Contains(q, "add over their base images") {
		t.Errorf("quota line %q", q)
	}
}
