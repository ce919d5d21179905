package models

import (
	"context"
	"crypto/rsa"
	"errors"
	"strconv"
	"strings"
	"time"

	"golang.org/x/crypto/ssh"
	"gorm.io/gorm"
)

// SSHKey is a public key a user registered to reach their workbenches
// through the portal's SSH server. Deleting it is its revocation: the SSH
// server looks keys up on every connection, so a deleted key stops working
// for new connections at once.
//
// A key is pending until its holder connects once as verify-<VerifyCode>
// with it (ssh_key_verify.go): a public key is no secret, so adding one
// proves nothing, and a pending key opens nothing.
type SSHKey struct {
	ID          int64      `gorm:"primaryKey" json:"id"`
	UserID      int64      `json:"-"`
	Name        string     `json:"name"`
	PublicKey   string     `json:"public_key"`
	Fingerprint string     `json:"fingerprint"` // SHA256:… as `ssh-keygen -l` prints it
	CreatedAt   time.Time  `json:"created_at"`
	LastUsedAt  *time.Time `json:"last_used_at"`
	// VerifyCode is shown only to the account that added the key; "" once
	// verified. VerifyCodeAt is when it was issued (nil once verified): it
	// verifies the key only for SSHVerifyCodeValidFor after that.
	VerifyCode   string     `json:"-"`
	VerifyCodeAt *time.Time `json:"-"`
	VerifiedAt   *time.Time `json:"verified_at"`
}

// Verified reports whether the key's holder has proved they have its
// private key.
func (k *SSHKey) Verified() bool { return k.VerifiedAt != nil }

// TableName keeps gorm from spelling it "ssh_keys" differently.
func (SSHKey) TableName() string { return "ssh_keys" }

// maxSSHKeyLen bounds a pasted key: an RSA 16384-bit key is about 2.8 kB.
const maxSSHKeyLen = 8192

// ParseSSHPublicKey checks one authorized_keys line and returns the key in
// canonical form (type and base64, plus the comment if any) and its fingerprint.
func ParseSSHPublicKey(line string) (canonical, fingerprint string, err error) {
	line = strings.TrimSpace(line)
	if line == "" {
		return "", "", invalid("public_key", "paste a public key, e.g. the contents of ~/.ssh/id_ed25519.pub")
	}
	if len(line) > maxSSHKeyLen || strings.ContainsAny(line, "\r\n") {
		return "", "", invalid("public_key", "paste exactly one public key line")
	}
	if strings.Contains(line, "PRIVATE KEY") {
		return "", "", invalid("public_key", "this is a private key; paste the .pub file instead, and keep the private key secret")
	}
	pk, comment, options, rest, err := ssh.ParseAuthorizedKey([]byte(line))
	if err != nil {
		return "", "", invalid("public_key", "not an OpenSSH public key (want e.g. \"ssh-ed25519 AAAA… you@host\")")
	}
	if len(options) > 0 || len(strings.TrimSpace(string(rest))) > 0 {
		return "", "", invalid("public_key", "paste the key alone, without authorized_keys options")
	}
	if pk.Type() == ssh.KeyAlgoDSA {
		return "", "", invalid("public_key", "DSA keys are too weak; use ed25519, ECDSA or RSA")
	}
	if bits := rsaBits(pk); bits > 0 && bits < minRSABits {
		// As OpenSSH refuses them since 8.8's defaults (and NIST since 2013).
		return "", "", invalid("public_key", "an RSA key of %s bits is too weak: use ed25519, or RSA of at least %s bits", strconv.Itoa(bits), strconv.Itoa(minRSABits))
	}
	canonical = strings.TrimSpace(string(ssh.MarshalAuthorizedKey(pk)))
	if comment = strings.TrimSpace(comment); comment != "" {
		canonical += " " + comment
	}
	return canonical, ssh.FingerprintSHA256(pk), nil
}

// CreateSSHKey registers a public key for userID, pending until its holder
// verifies it (VerifySSHKey). Another account's pending copy of the same
// key does not stand in the way (anyone can paste a public key); a copy
// another account has verified does: its holder proved they have the
// private key.
func (s *Store) CreateSSHKey(ctx context.Context, userID int64, name, publicKey string) (*SSHKey, error) {
	name = strings.TrimSpace(name)
	if name == "" || len(name) > 64 {
		return nil, invalid("name", "give the key a name of 1–64 characters")
	}
	canonical, fp, err := ParseSSHPublicKey(publicKey)
	if err != nil {
		return nil, err
	}
	var verified SSHKey
	err = s.db.WithContext(ctx).Where("fingerprint = ? AND verified_at IS NOT NULL", fp).First(&verified).Error
	switch {
	case err == nil && verified.UserID != userID:
		// Said without naming the account, nor claiming the key is
		// theirs: whoever holds its private key proved it there.
		return nil, taken("public_key", "another account has already verified this key: make a new key for yourself, and tell an administrator if nobody else should hold its private key")
	case err == nil:
		return nil, taken("public_key", "this key is already registered")
	case !errors.Is(notFound(err), ErrNotFound):
		return nil, err
	}
	now := s.now()
	k := &SSHKey{UserID: userID, Name: name, PublicKey: canonical, Fingerprint: fp, CreatedAt: now, VerifyCode: newSSHVerifyCode(), VerifyCodeAt: &now}
	full := tooMany(CodeTooManySSHKeys, Reasonf("you already have the most SSH keys an account may have (%d, pending ones included); delete one you no longer use (on the SSH keys page, or DELETE /api/v1/ssh-keys/{id}) to make room", MaxSSHKeysPerUser))
	err = s.withCap(ctx, MaxSSHKeysPerUser, full, func(tx *gorm.DB) *gorm.DB {
		return tx.Model(&SSHKey{}).Where("user_id = ?", userID)
	}, func(tx *gorm.DB) error { return tx.Create(k).Error })
	if err != nil {
		if uniqueViolation(err) {
			var n int64
			s.db.WithContext(ctx).Model(&SSHKey{}).Where("user_id = ? AND fingerprint = ?", userID, fp).Count(&n)
			if n > 0 {
				return nil, taken("public_key", "this key is already registered")
			}
			return nil, taken("name", "you already have a key with this name")
		}
		return nil, err
	}
	return k, nil
}

// ListSSHKeys returns a user's keys, newest first.
func (s *Store) ListSSHKeys(ctx context.Context, userID int64) ([]SSHKey, error) {
	var ks []SSHKey
	err := s.db.WithContext(ctx).Where("user_id = ?", userID).Order("created_at DESC, id DESC").Find(&ks).Error
	return ks, err
}

// DeleteSSHKey removes (revokes) a key of userID; ownership is part of the
// query, so another user's key id is ErrNotFound.
func (s *Store) DeleteSSHKey(ctx context.Context, userID, keyID int64) (*SSHKey, error) {
	var k SSHKey
	if err := s.db.WithContext(ctx).Where("id = ? AND user_id = ?", keyID, userID).First(&k).Error; err != nil {
		return nil, notFound(err)
	}
	res := s.db.WithContext(ctx).Where("id = ? AND user_id = ?", keyID, userID).Delete(&SSHKey{})
	if res.Error != nil {
		return nil, res.Error
	}
	if res.RowsAffected == 0 {
		return nil, ErrNotFound
	}
	return &k, nil
}

// ErrUnknownSSHKey is returned for a key nobody (enabled) registered.
var ErrUnknownSSHKey = errors.New("unknown SSH key")

// UserBySSHKey resolves an offered public key to its verified key record
// and its enabled owner (a pending key is nobody's yet). It records use at
// most once a minute.
func (s *Store) UserBySSHKey(ctx context.Context, pk ssh.PublicKey) (*User, *SSHKey, error) {
	var k SSHKey
	if err := s.db.WithContext(ctx).Where("fingerprint = ? AND verified_at IS NOT NULL", ssh.FingerprintSHA256(pk)).First(&k).Error; err != nil {
		if errors.Is(notFound(err), ErrNotFound) {
			return nil, nil, ErrUnknownSSHKey
		}
		return nil, nil, err
	}
	u, err := s.UserByID(ctx, k.UserID)
	if err != nil {
		return nil, nil, err
	}
	if u.Disabled {
		return nil, nil, ErrUnknownSSHKey
	}
	now := s.now()
	if k.LastUsedAt == nil || now.Sub(*k.LastUsedAt) > time.Minute {
		s.db.WithContext(ctx).Model(&SSHKey{}).Where("id = ?", k.ID).Update("last_used_at", now)
	}
	return u, &k, nil
}

// SSHAccessEnded says why an SSH connection made with key keyID by user
// userID at credentials epoch epoch must end ("" while it may go on): the
// key was deleted, the account was disabled, or the user's credentials were
// reset (a password reset or a disable moves AuthEpoch on, as it ends portal
// sessions).
func (s *Store) SSHAccessEnded(ctx context.Context, keyID, userID, epoch int64) (string, error) {
	ok, err := s.SSHKeyExists(ctx, keyID)
	if err != nil {
		return "", err
	}
	if !ok {
		return "its key was deleted", nil
	}
	u, err := s.UserByID(ctx, userID)
	if errors.Is(err, ErrNotFound) {
		return "the account was removed", nil
	}
	if err != nil {
		return "", err
	}
	if u.Disabled {
		return "the account was disabled", nil
	}
	if u.AuthEpoch != epoch {
		return "the account's credentials were reset", nil
	}
	return "", nil
}

// SSHKeyExists reports whether key id is still registered (sessions check
// it so a deleted key's open sessions can be ended).
func (s *Store) SSHKeyExists(ctx context.Context, id int64) (bool, error) {
	var n int64
	err := s.db.WithContext(ctx).Model(&SSHKey{}).Where("id = ?", id).Count(&n).Error
	return n > 0, err
}

// minRSABits is the smallest RSA key taken.
const minRSABits = 2048

// rsaBits is the modulus size of an RSA public key, 0 for other kinds.
func rsaBits(pk ssh.PublicKey) int {
	cpk, ok := pk.(ssh.CryptoPublicKey)
	if !ok {
		return 0
	}
	if k, ok := cpk.CryptoPublicKey().(*rsa.PublicKey); ok {
		return k.N.BitLen()
	}
	return 0
}
