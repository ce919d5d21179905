package models

import (
	"context"
	"crypto/rand"
	"errors"
	"strings"
	"time"

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

// SSHVerifyCodeValidFor is how long a pending key's code verifies it,
// counted from when the code was issued (when the key was added, or when
// its owner asked for a new code). Verifying is one command run right
// after adding the key; a day leaves room to add it on one machine and
// verify it later that day from the one that holds the private key,
// whatever the time zone. A key still pending after that is more likely
// forgotten, or someone else's pasted by mistake, than waiting for its
// holder, and a code that never expires is a standing chance for someone
// to be talked into running it; its owner gets a new code with one click.
const SSHVerifyCodeValidFor = 24 * time.Hour

// ErrSSHVerifyCodeExpired is a pending key's code used after
// SSHVerifyCodeValidFor: it verifies nothing any more.
var ErrSSHVerifyCodeExpired = errors.New("the verification code has expired")

// VerifyExpiresAt is when a pending key's code stops verifying it (nil
// once verified).
func (k *SSHKey) VerifyExpiresAt() *time.Time {
	if k.Verified() || k.VerifyCode == "" {
		return nil
	}
	var at time.Time // a pending key without the time of its code: expired
	if k.VerifyCodeAt != nil {
		at = k.VerifyCodeAt.Add(SSHVerifyCodeValidFor)
	}
	return &at
}

// VerifyExpired reports whether a pending key's code no longer verifies
// it at now (false once verified).
func (k *SSHKey) VerifyExpired(now time.Time) bool {
	at := k.VerifyExpiresAt()
	return at != nil && !now.Before(*at)
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
// (VerifySSHKey is for after). ErrUnknownSSHKey when there is none, and
// ErrSSHVerifyCodeExpired (with the key but not its owner) when the code
// is past SSHVerifyCodeValidFor.
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
	if k.VerifyExpired(s.now()) {
		return nil, &k, ErrSSHVerifyCodeExpired
	}
	return u, &k, nil
}

// VerifySSHKey marks pending key keyID verified: call it only once its
// holder has signed with the private key. Other accounts' pending copies
// of the key go (they can never be verified now); removed is how many.
// ErrUnknownSSHKey when the key is gone or no longer pending,
// ErrSSHVerifyCodeExpired when its code is past SSHVerifyCodeValidFor,
// and ErrSSHKeyVerifiedElsewhere when another account verified the same
// key first (the key then stays pending in both cases).
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
		if k.VerifyExpired(now) {
			return ErrSSHVerifyCodeExpired
		}
		// The partial unique index on verified fingerprints settles a race
		// between two accounts' verifications.
		err := tx.Model(&SSHKey{}).Where("id = ? AND verified_at IS NULL", keyID).
			Updates(map[string]any{"verified_at": now, "verify_code": "", "verify_code_at": nil, "last_used_at": now}).Error
		if uniqueViolation(err) {
			return ErrSSHKeyVerifiedElsewhere
		}
		if err != nil {
			return err
		}
		k.VerifiedAt, k.LastUsedAt, k.VerifyCode, k.VerifyCodeAt = &now, &now, "", nil
		res := tx.Where("fingerprint = ? AND user_id <> ? AND verified_at IS NULL", k.Fingerprint, k.UserID).Delete(&SSHKey{})
		removed = res.RowsAffected
		return res.Error
	})
	if err != nil {
		return nil, 0, err
	}
	return k, removed, nil
}

// RenewSSHVerifyCode gives userID's pending key keyID a new code, valid
// for SSHVerifyCodeValidFor from now; the old one stops working.
// Ownership is part of the query, so another user's key id is
// ErrNotFound; a verified key needs no code (ConflictError).
func (s *Store) RenewSSHVerifyCode(ctx context.Context, userID, keyID int64) (*SSHKey, error) {
	var k SSHKey
	if err := s.db.WithContext(ctx).Where("id = ? AND user_id = ?", keyID, userID).First(&k).Error; err != nil {
		return nil, notFound(err)
	}
	verified := &ConflictError{Message: Reasonf("this key is already verified: it needs no code")}
	if k.Verified() {
		return nil, verified
	}
	now, code := s.now(), newSSHVerifyCode()
	res := s.db.WithContext(ctx).Model(&SSHKey{}).Where("id = ? AND user_id = ? AND verified_at IS NULL", keyID, userID).
		Updates(map[string]any{"verify_code": code, "verify_code_at": now})
	if res.Error != nil {
		return nil, res.Error
	}
	if res.RowsAffected == 0 { // verified or deleted since it was read
		ok, err := s.SSHKeyExists(ctx, keyID)
		if err != nil {
			return nil, err
		}
		if !ok {
			return nil, ErrNotFound
		}
		return nil, verified
	}
	k.VerifyCode, k.VerifyCodeAt = code, &now
	return &k, nil
}
