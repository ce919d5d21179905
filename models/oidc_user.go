package models

import (
	"context"
	"errors"
	"strings"
	"time"

	"gorm.io/gorm"
)

// OIDCIdentity is who the OIDC provider says signed in, with the portal
// groups the directory puts them in.
type OIDCIdentity struct {
	Issuer, Subject string
	// Username, Email, DisplayName come from the ID token's claims; the
	// username is used when the account is first made and never changed
	// after (it names volumes and containers).
	Username    string
	Email       string
	DisplayName string
	// Groups are the portal groups the directory puts the user in.
	// Managed are the portal groups the directory decides membership of:
	// the user is added to those in Groups and removed from the others.
	// Groups outside Managed are the admins' to set by hand.
	Groups  []string
	Managed []string
	// CreateGroups makes missing portal groups named in Groups (an
	// explicit group mapping); without it unknown names are ignored.
	CreateGroups bool
}

// ErrAccountDisabled refuses a sign-in to a disabled account.
var ErrAccountDisabled = errors.New("this account is disabled")

// ErrUsernameTaken refuses to make an SSO account whose username already
// belongs to another account (a local one, or one linked to another
// identity): linking by name would let whoever controls the username claim
// at the provider take over that account, admins included.
var ErrUsernameTaken = errors.New("an account with this username already exists")

// OIDCSignIn finds the account linked to the identity, or makes it on the
// first sign-in, and brings its managed group memberships in line with the
// directory, all in one transaction. created says it was made now.
func (s *Store) OIDCSignIn(ctx context.Context, id OIDCIdentity) (u *User, created bool, err error) {
	if id.Issuer == "" || id.Subject == "" {
		return nil, false, errors.New("oidc: identity without issuer or subject")
	}
	now := s.now()
	err = s.db.WithContext(ctx).Transaction(func(tx *gorm.DB) error {
		var found User
		err := tx.Where("oidc_issuer = ? AND oidc_subject = ?", id.Issuer, id.Subject).First(&found).Error
		switch {
		case err == nil:
			if found.Disabled {
				return ErrAccountDisabled
			}
			upd := map[string]any{}
			if e := strings.TrimSpace(id.Email); e != "" && e != found.Email {
				upd["email"] = e
			}
			if d := strings.TrimSpace(id.DisplayName); d != "" && d != found.DisplayName {
				upd["display_name"] = d
			}
			if len(upd) > 0 {
				upd["updated_at"] = now
				if err := tx.Model(&User{}).Where("id = ?", found.ID).Updates(upd).Error; err != nil {
					return err
				}
			}
			u = &found
		case errors.Is(err, gorm.ErrRecordNotFound):
			name := strings.ToLower(strings.TrimSpace(id.Username))
			if err := ValidUsername(name); err != nil {
				return err
			}
			var n int64
			if err := tx.Model(&User{}).Where("username = ?", name).Count(&n).Error; err != nil {
				return err
			}
			if n > 0 {
				return ErrUsernameTaken
			}
			key, err := newHomeKey(tx, name)
			if err != nil {
				return err
			}
			nu := &User{Username: name, HomeKey: key, Email: strings.TrimSpace(id.Email), DisplayName: strings.TrimSpace(id.DisplayName),
				Role: RoleUser, OIDCIssuer: id.Issuer, OIDCSubject: id.Subject, EmailWorkbenchNotices: true, CreatedAt: now, UpdatedAt: now}
			if err := tx.Create(nu).Error; err != nil {
				if uniqueViolation(err) {
					return ErrUsernameTaken
				}
				return err
			}
			u, created = nu, true
		default:
			return err
		}
		return syncManagedGroups(tx, u.ID, id, now)
	})
	if err != nil {
		return nil, false, err
	}
	return u, created, nil
}

// syncManagedGroups adds userID to the groups of id.Groups and removes it
// from the other groups of id.Managed.
func syncManagedGroups(tx *gorm.DB, userID int64, id OIDCIdentity, now time.Time) error {
	want := map[string]bool{}
	for _, g := range id.Groups {
		want[strings.ToLower(cleanName(g))] = true
	}
	for _, name := range id.Managed {
		name = cleanName(name)
		var g Group
		err := tx.Where("name = ?", name).First(&g).Error
		if errors.Is(err, gorm.ErrRecordNotFound) {
			if !want[strings.ToLower(name)] || !id.CreateGroups || !groupNameRe.MatchString(name) {
				continue
			}
			// An id no deleted group had (insertGroup): the ledger and the
			// membership record name a deleted group by its id.
			g = Group{Name: name, Description: "made by single sign-on group mapping", CreatedAt: now.UTC()}
			if err = insertGroup(tx, &g); err != nil {
				return err
			}
		} else if err != nil {
			return err
		}
		if want[strings.ToLower(name)] {
			err = joinGroup(tx, g.ID, userID, now)
		} else {
			err = leaveGroup(tx, g.ID, userID, now)
		}
		if err != nil {
			return err
		}
	}
	return nil
}

// GroupNames returns the names of every portal group.
func (s *Store) GroupNames(ctx context.Context) ([]string, error) {
	var names []string
	err := s.db.WithContext(ctx).Model(&Group{}).Order("name").Pluck("name", &names).Error
	return names, err
}
