package models

import (
	"context"
	"errors"
	"testing"
)

// Groups and catalog entries take names in any script (a Chinese lab's
// 视觉组), the same name in two Unicode forms is one name, and what could
// break a page, a path or a CSV is still refused.
func TestNamesInAnyScript(t *testing.T) {
	s, _ := newTestStore(t)
	ctx := context.Background()
	for _, name := range []string{"视觉组", "NLP 组", "Équipe-Vision", "研究生 2026"} {
		g, err := s.CreateGroup(ctx, name, "")
		if err != nil {
			t.Fatalf("group %q: %v", name, err)
		}
		if got, err := s.GroupByName(ctx, name); err != nil || got.ID != g.ID {
			t.Fatalf("group %q by name: %+v %v", name, got, err)
		}
	}
	// "Café" composed (U+00E9) and decomposed (e + U+0301) is one group.
	if _, err := s.CreateGroup(ctx, "Caf\u00e9", ""); err != nil {
		t.Fatal(err)
	}
	var ve *ValidationError
	if _, err := s.CreateGroup(ctx, "Cafe\u0301", ""); !errors.As(err, &ve) || ve.Field != "name" {
		t.Fatalf("the decomposed twin of an existing group: %v, want a name error", err)
	}
	if g, err := s.GroupByName(ctx, "Cafe\u0301"); err != nil || g.Name != "Caf\u00e9" {
		t.Fatalf("looking up the decomposed form: %+v %v", g, err)
	}
	// Full-width letters and doubled spaces are the same name too.
	if _, err := s.CreateGroup(ctx, "ｖｉｓｉｏｎ  team", ""); err != nil {
		t.Fatal(err)
	}
	if _, err := s.CreateGroup(ctx, "vision team", ""); !errors.As(err, &ve) || ve.Field != "name" {
		t.Fatalf("vision team beside ｖｉｓｉｏｎ  team: %v, want a name error", err)
	}
	for _, bad := range []string{"", "-lead", "a/b", "<b>x</b>", "组\n名", "名字;DROP"} {
		if _, err := s.CreateGroup(ctx, bad, ""); !errors.As(err, &ve) || ve.Field != "name" {
			t.Errorf("group %q: %v, want a name error", bad, err)
		}
	}

	f := Flavor{Name: "教学版 (CPU)", CPUMilli: 1000, MemoryMiB: 1024}
	if err := f.Validate(); err != nil {
		t.Errorf("flavor %q: %v", f.Name, err)
	}
	f.Name = "教学/版"
	if err := f.Validate(); !errors.As(err, &ve) || ve.Field != "name" {
		t.Errorf("flavor %q: %v, want a name error", f.Name, err)
	}

	// Single sign-on makes a mapped group whose name the directory writes
	// in Chinese (it was silently skipped before).
	u, _, err := s.OIDCSignIn(ctx, OIDCIdentity{Issuer: "https://idp", Subject: "s1", Username: "lin",
		Groups: []string{"多模态组"}, Managed: []string{"多模态组"}, CreateGroups: true})
	if err != nil {
		t.Fatal(err)
	}
	g, err := s.GroupByName(ctx, "多模态组")
	if err != nil || len(g.Members) != 1 || g.Members[0] != u.Username {
		t.Fatalf("group mapped from the directory: %+v %v", g, err)
	}
}
