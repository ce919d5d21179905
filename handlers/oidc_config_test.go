package handlers

import (
	"slices"
	"testing"
)

func TestClaimStrings(t *testing.T) {
	claims := map[string]any{"list": []any{"a", "", 3, "b"}, "spaced": "a b  c", "none": 7}
	if got := claimStrings(claims, "list"); !slices.Equal(got, []string{"a", "b"}) {
		t.Errorf("list claim: %v", got)
	}
	if got := claimStrings(claims, "spaced"); !slices.Equal(got, []string{"a", "b", "c"}) {
		t.Errorf("space-separated claim: %v", got)
	}
	if got := claimStrings(claims, "none"); got != nil {
		t.Errorf("number claim: %v", got)
	}
	if got := claimStrings(claims, "missing"); got != nil {
		t.Errorf("missing claim: %v", got)
	}
}

func TestPortalGroupsMapping(t *testing.T) {
	mapped := &oidcClient{cfg: OIDCConfig{GroupMap: map[string]string{"cn=ml,ou=groups": "ml", "ml-old": "ml", "phys": "physics"}}}
	groups, managed, create := mapped.portalGroups([]string{"cn=ml,ou=groups", "other"}, []string{"ml", "admins-by-hand"})
	slices.Sort(managed)
	if !slices.Equal(groups, []string{"ml"}) || !slices.Equal(managed, []string{"ml", "physics"}) || !create {
		t.Errorf("mapped: groups %v managed %v create %v", groups, managed, create)
	}
	same := &oidcClient{cfg: OIDCConfig{}}
	groups, managed, create = same.portalGroups([]string{"Physics", "chem"}, []string{"physics", "ml"})
	if !slices.Equal(groups, []string{"physics"}) || !slices.Equal(managed, []string{"physics", "ml"}) || create {
		t.Errorf("same names: groups %v managed %v create %v", groups, managed, create)
	}
}
