package models

import (
	"context"
	"crypto/rand"
	"errors"
	"strings"

	"golang.org/x/crypto/ssh"
	"gorm.io/gorm"
)

// SSHVerifyUserPrefix starts the SSH user name with which a key's holder
// proves they have its private key: ssh -p PORT verify-<code>@portal.
const SSHVerifyUserPrefix = "verify-"

// sshVerifyCodeLen is how many base32 characters a code has (50 bits).
// The code is no secret that guards the key (the signature does): it
// picks which account's pending copy of the key the holder confirms, so
// that someone who pasted another person's public key cannot have it
// confirmed for them by a connection its holder made for their own.
const sshVerifyCodeLen = 10

// newSSHVerifyCode is a fresh random code in lowercase base32 (it is typed
// into an SSH user name, where case may not survive).
func newSSHVerifyCode() string {
	return strings.ToLower(rand.Text()[:sshVerifyCodeLen])
}

// VerifyUser is the SSH user name that verifies a pending key ("" once
// verified).
func (k *SSHKey) VerifyUser() string {
	if k.Verified() || k.VerifyCode == "" {
		return ""
	}
	return SSHVerifyUserPrefix + k.VerifyCode
}

// ErrSSHKeyVerifiedElsewhere is a verification that lost to another
// account's of the same key (only one account may use a key).
var ErrSSHKeyVerifiedElsewhere = errors.New("another account has verified this key")

// PendingSSHKey finds the pending key that the SSH user name verify-<code>
// and the offered key pk name together, and its enabled owner. It only
// looks: the SSH server asks it before the client has signed anything
// (VerifySSHKey is for after). ErrUnknownSSHKey when there is none.
func (s *Store) PendingSSHKey(ctx context.Context, code string, pk ssh.PublicKey) (*User, *SSHKey, error) {
	code = strings.ToLower(code)
	if len(code) != sshVerifyCodeLen {
		return nil, nil, ErrUnknownSSHKey
	}
	var k SSHKey
	err := s.db.WithContext(ctx).Where("verify_code = ? AND fingerprint = ? AND verified_at IS NULL", code, ssh.FingerprintSHA256(pk)).First(&k).Error
	if err != nil {
		if errors.Is(notFound(err), ErrNotFound) {
			return nil, nil, ErrUnknownSSHKey
		}
		return nil, nil, err
	}
	u, err := s.UserByID(ctx, k.UserID)
	if errors.Is(err, ErrNotFound) || (err == nil && u.Disabled) {
		return nil, nil, ErrUnknownSSHKey
	}
	if err != nil {
		return nil, nil, err
	}
	return u, &k, nil
}

// VerifySSHKey marks pending key keyID verified: call it only once its
// holder has signed with the private key. Other accounts' pending copies
// of the key go (they can never be verified now); removed is how many.
// ErrUnknownSSHKey when the key is gone or no longer pending, and
// ErrSSHKeyVerifiedElsewhere when another account verified the same key
// first (the key then stays pending).
func (s *Store) VerifySSHKey(ctx context.Context, keyID int64) (k *SSHKey, removed int64, err error) {
	k = &SSHKey{}
	err = s.db.WithContext(ctx).Transaction(func(tx *gorm.DB) error {
		if err := tx.Where("id = ? AND verified_at IS NULL", keyID).First(k).Error; err != nil {
			if errors.Is(notFound(err), ErrNotFound) {
				return ErrUnknownSSHKey
			}
			return err
		}
		now := s.now()
		// The partial unique index on verified fingerprints settles a race
		// between two accounts' verifications.
		err := tx.Model(&SSHKey{}).Where("id = ? AND verified_at IS NULL", keyID).
			Updates(map[string]any{"verified_at": now, "verify_code": "", "last_used_at": now}).Error
		if uniqueViolation(err) {
			return ErrSSHKeyVerifiedElsewhere
		}
		if err != nil {
			return err
		}
		k.VerifiedAt, k.LastUsedAt, k.VerifyCode = &now, &now, ""
		res := tx.Where("fingerprint = ? AND user_id <> ? AND verified_at IS NULL", k.Fingerprint, k.UserID).Delete(&SSHKey{})
		removed = res.RowsAffected
		return res.Error
	})
	if err != nil {
		return nil, 0, err
	}
	return k, removed, nil
}
