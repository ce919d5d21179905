package web_test

import (
	"context"
	"net/http"
	"testing"
)

// PUT /admin/priority-classes/{name} changes what its body names and keeps
// the rest: re-saving the default class with only a rank had unmarked it,
// leaving no default, and every launch that named no class was refused.
// The default stays the default until another class takes over.
func TestPriorityClassPutKeepsWhatItDoesNotName(t *testing.T) {
	p := newPortal(t)
	admin := tokenFor(t, p, "admin", "admin")
	ctx := context.Background()
	def, err := p.srv.Store.PriorityClassFor(ctx, "")
	if err != nil {
		t.Fatal(err)
	}

	code, out := p.api("PUT", "/api/v1/admin/priority-classes/"+def.Name, admin, `{"rank":90}`)
	if code != http.StatusOK || out["is_default"] != true || out["rank"] != 90.0 || out["description"] != def.Description {
		t.Fatalf("PUT rank only: %d %v; want the default kept with its description", code, out)
	}
	// Made preemptible through the side door of a body without is_default.
	if code, out := p.api("PUT", "/api/v1/admin/priority-classes/"+def.Name, admin, `{"preemptible":true}`); code != http.StatusBadRequest || errCode(out) != "invalid_is_default" {
		t.Fatalf("PUT preemptible on the default: %d %v", code, out)
	}
	if code, out := p.api("PUT", "/api/v1/admin/priority-classes/"+def.Name, admin, `{"is_default":false}`); code != http.StatusBadRequest || errCode(out) != "invalid_is_default" {
		t.Fatalf("PUT is_default false on the only default: %d %v", code, out)
	}
	if code, out := p.api("PUT", "/api/v1/admin/priority-classes/urgent", admin, `{"description":"deadlines"}`); code != http.StatusBadRequest || errCode(out) != "invalid_rank" {
		t.Fatalf("PUT a new class without a rank: %d %v", code, out)
	}
	if got, err := p.srv.Store.PriorityClassFor(ctx, ""); err != nil || got.Name != def.Name || got.Preemptible {
		t.Fatalf("the default after the refused PUTs: %+v %v", got, err)
	}

	before, err := p.srv.Store.PriorityClassFor(ctx, "batch")
	if err != nil {
		t.Fatal(err)
	}
	// Handing the default over is one PUT on the new default.
	if code, out := p.api("PUT", "/api/v1/admin/priority-classes/urgent", admin, `{"rank":200,"is_default":true}`); code != http.StatusOK {
		t.Fatalf("new default: %d %v", code, out)
	}
	if code, out := p.api("PUT", "/api/v1/admin/priority-classes/"+def.Name, admin, `{"is_default":false}`); code != http.StatusOK || out["is_default"] != false {
		t.Fatalf("old default, no longer the default: %d %v", code, out)
	}
	if got, err := p.srv.Store.PriorityClassFor(ctx, ""); err != nil || got.Name != "urgent" {
		t.Fatalf("default now: %+v %v", got, err)
	}
	// A class the change did not touch keeps its time of last change.
	if after, err := p.srv.Store.PriorityClassFor(ctx, "batch"); err != nil || !after.UpdatedAt.Equal(before.UpdatedAt) {
		t.Errorf("batch's updated_at %v → %v (%v): it was not changed", before.UpdatedAt, after.UpdatedAt, err)
	}
}
