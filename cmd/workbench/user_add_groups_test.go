package main

import (
	"context"
	"errors"
	"slices"
	"strings"
	"testing"

	"workbench/models"
)

// `user add --group` puts the account in existing groups, repeated or
// comma-separated, audited as the command line's; an unknown group refuses
// the command and creates nothing.
func TestUserAddWithGroups(t *testing.T) {
	p := newCLIPortal(t)
	ctx := context.Background()
	s := p.store()
	for _, name := range []string{"ml101", "gpu-lab", "extra"} {
		if _, err := s.CreateGroup(ctx, name, ""); err != nil {
			t.Fatal(err)
		}
	}
	out := p.must("stud01-password\n", "user", "add", "stud01", "--group", "ml101,gpu-lab", "--password-stdin", "--group", "extra")
	if out != "added stud01 (user) in ml101, gpu-lab, extra\n" {
		t.Errorf("user add said %q", out)
	}
	for _, name := range []string{"ml101", "gpu-lab", "extra"} {
		g, err := s.GroupByName(ctx, name)
		if err != nil {
			t.Fatal(err)
		}
		if !slices.Equal(g.Members, []string{"stud01"}) {
			t.Errorf("%s members %v", name, g.Members)
		}
		if n := p.audited("group.add_member", name); n != 1 {
			t.Errorf("%d group.add_member rows on %s, want 1", n, name)
		}
	}
	if n := p.audited("user.create", "stud01"); n != 1 {
		t.Errorf("%d user.create rows, want 1", n)
	}

	p.refused("stud02-password\n", `--group: there is no group "nope"`, "user", "add", "stud02", "--group", "ml101", "--group", "nope", "--password-stdin")
	if _, err := s.UserByUsername(ctx, "stud02"); !errors.Is(err, models.ErrNotFound) {
		t.Errorf("the refused add created stud02 (err %v)", err)
	}
	if g, _ := s.GroupByName(ctx, "ml101"); strings.Join(g.Members, ",") != "stud01" {
		t.Errorf("ml101 after the refused add: %v", g.Members)
	}
}
