package models

import (
	"context"
	"errors"
	"fmt"
	"strings"
)

// CreateUserInGroups creates the account n and makes it a member of the
// groups named, in one transaction: an instructor sets up a class with one
// call per student, not one for the account and one per group. A name that
// is no existing group refuses the whole call (Code unknown_group) and
// creates nothing: an account that exists outside its class is what the
// instructor then has to find and fix by hand. Groups are not created here
// (a typo would make a new group). The groups are returned as stored, each
// once. Called on a Store from InTx it commits with the caller's audit rows.
func (s *Store) CreateUserInGroups(ctx context.Context, n NewUser, groups []string) (*User, []*Group, error) {
	var u *User
	var gs []*Group
	err := s.InTx(ctx, func(tx *Store) error {
		seen := map[int64]bool{}
		for _, name := range groups {
			if strings.TrimSpace(name) == "" {
				continue // "--group a,,b" or a trailing comma
			}
			g, err := tx.GroupByName(ctx, name)
			if err != nil {
				if errors.Is(err, ErrNotFound) {
					return &ValidationError{Field: "groups", Code: "unknown_group",
						Message: fmt.Sprintf("there is no group %q; create it first (groups are not made by adding a user)", strings.TrimSpace(name))}
				}
				return err
			}
			if !seen[g.ID] {
				seen[g.ID] = true
				gs = append(gs, g)
			}
		}
		var err error
		if u, err = tx.CreateUser(ctx, n); err != nil {
			return err
		}
		for _, g := range gs {
			if err := tx.AddGroupMember(ctx, g.ID, u.ID); err != nil {
				return err
			}
			g.Members = append(g.Members, u.Username)
		}
		return nil
	})
	if err != nil {
		return nil, nil, err
	}
	return u, gs, nil
}
