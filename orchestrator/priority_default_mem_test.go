package orchestrator

import (
	"context"
	"errors"
	"strings"
	"testing"

	"workbench/models"
)

// In memory: a launch without a class takes its flavor's default, else the
// highest default among its owner's groups, else the global default; a
// user may choose classes up to that default's rank, not above.
func TestMemPriorityDefaultsOfGroupsAndFlavors(t *testing.T) {
	t.Parallel()
	r := newQueueRig(t)
	ctx := context.Background()
	carol := r.user(t, "carol")
	research, err := r.store.CreateGroup(ctx, "research", "")
	if err != nil {
		t.Fatal(err)
	}
	ops, err := r.store.CreateGroup(ctx, "ops", "")
	if err != nil {
		t.Fatal(err)
	}
	for _, g := range []*models.Group{research, ops} {
		if err := r.store.AddGroupMember(ctx, g.ID, carol.ID); err != nil {
			t.Fatal(err)
		}
	}
	fl, err := r.store.FlavorByID(ctx, r.wb.FlavorID)
	if err != nil {
		t.Fatal(err)
	}
	set := func(scope string, id int64, class string) {
		t.Helper()
		if _, err := r.store.SetPriorityDefault(ctx, scope, id, class); err != nil {
			t.Fatal(err)
		}
	}
	class := func(name string, req LaunchRequest) string {
		t.Helper()
		return r.launch(t, carol, name, req).Priority
	}

	// Nothing set: the global default.
	if got := class("plain", LaunchRequest{Queue: true}); got != "interactive" {
		t.Fatalf("no defaults set: %q, want interactive", got)
	}
	// A group default.
	set(models.PriorityScopeGroup, research.ID, "batch")
	if got := class("group", LaunchRequest{Queue: true}); got != "batch" {
		t.Fatalf("group default: %q, want batch", got)
	}
	// Above the default's rank is for administrators.
	_, err = r.m.Launch(ctx, carol, LaunchRequest{Name: "above", Image: "mem", Flavor: r.flavor, Queue: true, Priority: "interactive"})
	var ve *models.ValidationError
	if !errors.As(err, &ve) || ve.Field != "priority" || !strings.Contains(ve.Message, `above the default "batch"`) {
		t.Fatalf("interactive above a batch default: %v", err)
	}
	// At or below it, the user's choice.
	if got := class("lower", LaunchRequest{Queue: true, Priority: "preemptible"}); got != "preemptible" {
		t.Fatalf("chosen below the default: %q", got)
	}
	// Two groups: the higher default wins.
	set(models.PriorityScopeGroup, ops.ID, "interactive")
	if got := class("two-groups", LaunchRequest{Queue: true}); got != "interactive" {
		t.Fatalf("two group defaults: %q, want interactive (the higher)", got)
	}
	// The flavor's default comes first.
	set(models.PriorityScopeFlavor, fl.ID, "batch")
	if got := class("flavor", LaunchRequest{Queue: true}); got != "batch" {
		t.Fatalf("flavor default: %q, want batch", got)
	}
	// Cleared: back to the groups'.
	set(models.PriorityScopeFlavor, fl.ID, "")
	if got := class("cleared", LaunchRequest{Queue: true}); got != "interactive" {
		t.Fatalf("after clearing the flavor's default: %q", got)
	}
	// Bad input is refused with the field.
	if _, err := r.store.SetPriorityDefault(ctx, models.PriorityScopeGroup, research.ID, "nope"); !errors.As(err, &ve) || ve.Field != "class" {
		t.Fatalf("unknown class: %v", err)
	}
	if _, err := r.store.SetPriorityDefault(ctx, models.PriorityScopeFlavor, 99999, "batch"); !errors.As(err, &ve) || ve.Field != "id" {
		t.Fatalf("unknown flavor: %v", err)
	}
	if _, err := r.store.SetPriorityDefault(ctx, "user", 1, "batch"); !errors.As(err, &ve) || ve.Field != "scope" {
		t.Fatalf("unknown scope: %v", err)
	}
}
