package models

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"strings"

	"gorm.io/gorm"
)

// A rename changes the name a person signs in with and the portal shows.
// Everything else refers to the account by id (sessions, tokens, keys,
// workbenches, groups, quotas, bookings, the ledger), and the notebook
// addresses and the SSH command name the workbench, not the user. What the
// engine holds is named by the home key, which the rename keeps: the home
// volume wb-home-<install>-<key> cannot be renamed.

// RenameUser gives the live account id the username name, checked as a new
// account's. It returns the name the account had; renamed is false when it
// had name already (nothing written).
func (s *Store) RenameUser(ctx context.Context, id int64, name string) (old string, renamed bool, err error) {
	name = strings.TrimSpace(name)
	if err := ValidUsername(name); err != nil {
		return "", false, err
	}
	err = s.db.WithContext(ctx).Transaction(func(tx *gorm.DB) error {
		var u User
		if err := tx.Where("id = ? AND deleted_at IS NULL", id).First(&u).Error; err != nil {
			return notFound(err)
		}
		old = u.Username
		if u.Username == name {
			return nil
		}
		// The home key is written out before the name changes: a row made
		// before keys were recorded reads its key from the username.
		err := tx.Model(&User{}).Where("id = ?", id).Updates(map[string]any{"username": name, "home_key": u.HomeName(), "updated_at": s.now()}).Error
		if uniqueViolation(err) {
			return taken("username", "is already taken")
		}
		renamed = err == nil
		return err
	})
	return old, renamed, err
}

// newHomeKey is the home key of a new account named username: the name
// itself, unless a renamed account's home still carries it (that one was
// "bob" and is "robert" now); then the name with a random suffix, so the
// new "bob" never mounts the other's files.
func newHomeKey(tx *gorm.DB, username string) (string, error) {
	for key := username; ; {
		var n int64
		if err := tx.Model(&User{}).Where("home_key = ?", key).Count(&n).Error; err != nil {
			return "", err
		}
		if n == 0 {
			return key, nil
		}
		b := make([]byte, 3)
		_, _ = rand.Read(b) // crypto/rand never fails on Linux
		key = username + "-" + hex.EncodeToString(b)
	}
}

// UserByHomeName returns the account whose home volume and container
// labels carry name (storage metering reads a volume's owner label).
func (s *Store) UserByHomeName(ctx context.Context, name string) (*User, error) {
	var u User
	err := s.db.WithContext(ctx).Where("home_key = ? OR (home_key = '' AND username = ?)", name, name).First(&u).Error
	return &u, notFound(err)
}
