package models

import (
	"context"
	"errors"
	"strconv"
	"testing"
)

// A flavor whose name is another flavor's id is found by its name: the API
// takes "a name or an id", and the one query both ways picked the lower id
// (a script naming flavor "4" got the 4-GPU flavor whose id is 4).
func TestByNameOrIDPrefersTheName(t *testing.T) {
	s, _ := newTestStore(t)
	ctx := context.Background()
	var first, named Flavor
	for i := range 3 {
		f := Flavor{Name: "flavor-" + strconv.Itoa(i), CPUMilli: 1000, MemoryMiB: 1024, ShmMiB: 64, Enabled: true}
		if err := s.CreateFlavor(ctx, &f); err != nil {
			t.Fatal(err)
		}
		if i == 0 {
			first = f
		} else {
			named = f
		}
	}
	// A name of digits alone is refused now; one made before that is
	// written here as an old install holds it.
	if err := s.db.Exec("UPDATE flavors SET name = ? WHERE id = ?", strconv.FormatInt(first.ID, 10), named.ID).Error; err != nil {
		t.Fatal(err)
	}
	got, err := s.FlavorByNameOrID(ctx, strconv.FormatInt(first.ID, 10))
	if err != nil || got.ID != named.ID {
		t.Fatalf("flavor %q: %+v, %v; want the one of that name (id %d)", strconv.FormatInt(first.ID, 10), got, err, named.ID)
	}
	if got, err := s.FlavorByNameOrID(ctx, "flavor-1"); err != nil || got.Name != "flavor-1" {
		t.Fatalf("by name: %+v, %v", got, err)
	}
	if got, err := s.FlavorByNameOrID(ctx, strconv.FormatInt(named.ID, 10)); err != nil || got.ID != named.ID {
		t.Fatalf("by id %d: %+v, %v", named.ID, got, err)
	}
	for _, key := range []string{"0" + strconv.FormatInt(named.ID, 10), "999", "nope"} {
		if _, err := s.FlavorByNameOrID(ctx, key); !errors.Is(err, ErrNotFound) {
			t.Errorf("%q: %v, want not found", key, err)
		}
	}

	// New names of digits alone are refused, images' as flavors'.
	f := Flavor{Name: "42", CPUMilli: 1000, MemoryMiB: 1024, ShmMiB: 64, Enabled: true}
	var ve *ValidationError
	if err := s.CreateFlavor(ctx, &f); !errors.As(err, &ve) || ve.Field != "name" {
		t.Errorf("flavor named 42: %v, want a name error", err)
	}
	img := validImage()
	img.Name = "7"
	if err := s.CreateImage(ctx, &img); !errors.As(err, &ve) || ve.Field != "name" {
		t.Errorf("image named 7: %v, want a name error", err)
	}
}
