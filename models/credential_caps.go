package models

import (
	"context"

	"gorm.io/gorm"
)

// Caps on the credentials one account may hold. Each is a row, and an SSH
// key is also a candidate the SSH server looks up on every handshake: with
// no cap a script (or a leaked token) could mint them without end. The
// numbers are far above what a person uses (a token per script or
// machine, a key per laptop) and low enough that a listing stays one page.
// Only live ones count, so making room is revoking one.
const (
	// MaxAPITokensPerUser bounds a user's unrevoked, unexpired API tokens.
	MaxAPITokensPerUser = 50
	// MaxWorkbenchTokensPerWorkbench bounds the unrevoked, unexpired
	// access tokens of one workbench (a client or two per person).
	MaxWorkbenchTokensPerWorkbench = 20
	// MaxSSHKeysPerUser bounds a user's SSH keys, pending ones included:
	// a pending key is a row the verify handshake looks up too, and its
	// owner can renew an expired code, so it counts until it is deleted
	// (deleting is a key's revocation).
	MaxSSHKeysPerUser = 20
)

// Codes the API answers a refused credential with (409).
const (
	CodeTooManyTokens  = "too_many_tokens"
	CodeTooManySSHKeys = "too_many_ssh_keys"
)

// tooMany is the refusal of a credential past its cap: Taken (a conflict
// with what the account holds, 409 on the API) with its own code, and the
// form shows it beside the name.
func tooMany(code, msg string) error {
	return &ValidationError{Field: "name", Code: code, Taken: true, Message: msg}
}

// withCap runs count and, when it is under max, insert, in one
// transaction (immediate, as the DSN makes them; a savepoint within
// InTx), so two requests at once cannot both take the last place.
func (s *Store) withCap(ctx context.Context, max int64, refuse error, count func(tx *gorm.DB) *gorm.DB, insert func(tx *gorm.DB) error) error {
	return s.db.WithContext(ctx).Transaction(func(tx *gorm.DB) error {
		var n int64
		if err := count(tx).Count(&n).Error; err != nil {
			return err
		}
		if n >= max {
			return refuse
		}
		return insert(tx)
	})
}
