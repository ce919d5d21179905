package models

import (
	"context"
	"strings"
	"testing"
)

// The seeded texts are the ones a new installation holds: the catalog's
// image descriptions and the priority classes' from their migration.
func TestSeededTextsAreTheSeeds(t *testing.T) {
	s, _ := newTestStore(t)
	ctx := context.Background()
	if err := s.SeedCatalog(ctx, nil); err != nil {
		t.Fatal(err)
	}
	imgs, err := s.ListImages(ctx, false)
	if err != nil || len(imgs) == 0 {
		t.Fatalf("seeded catalog: %d images (%v)", len(imgs), err)
	}
	for _, img := range imgs {
		if !SeededText(img.Description) {
			t.Errorf("image %s: %q is not a seeded text", img.Name, img.Description)
		}
	}
	classes, err := s.PriorityClasses(ctx)
	if err != nil || len(classes) != len(seededClassDescriptions) {
		t.Fatalf("%d priority classes (%v), %d seeded descriptions", len(classes), err, len(seededClassDescriptions))
	}
	for _, pc := range classes {
		if !SeededText(pc.Description) {
			t.Errorf("class %s: %q is not a seeded text", pc.Name, pc.Description)
		}
	}
	// Pages print them as catalog keys (i18n.T): a printf verb would be
	// read as one.
	for _, img := range imgs {
		if strings.Contains(img.Description, "%") {
			t.Errorf("image %s's seeded description has a %%: %q", img.Name, img.Description)
		}
	}
	for _, d := range seededClassDescriptions {
		if strings.Contains(d, "%") {
			t.Errorf("seeded class description has a %%: %q", d)
		}
	}
	if SeededText("my own words") || SeededText("") {
		t.Error("an administrator's text counts as seeded")
	}
}
