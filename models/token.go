package models

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"strings"
	"time"
	"unicode"
	"unicode/utf8"

	"gorm.io/gorm"
)

// TokenPrefix marks portal API tokens so they are recognisable in logs and by
// secret scanners.
const TokenPrefix = "wbt_"

// APIToken is a named API credential of a user. Only the SHA-256 of the secret
// is stored: the secret has 256 bits of entropy, so a fast hash is enough and
// lets every API request check it cheaply.
type APIToken struct {
	ID         int64      `gorm:"primaryKey" json:"id"`
	UserID     int64      `json:"-"`
	Name       string     `json:"name"`
	TokenHash  string     `json:"-"`
	Prefix     string     `json:"prefix"`
	ExpiresAt  *time.Time `json:"expires_at"`
	LastUsedAt *time.Time `json:"last_used_at"`
	RevokedAt  *time.Time `json:"revoked_at"`
	CreatedAt  time.Time  `json:"created_at"`
}

// Active reports whether the token can still be used at now.
func (t *APIToken) Active(now time.Time) bool {
	return t.RevokedAt == nil && (t.ExpiresAt == nil || now.Before(*t.ExpiresAt))
}

func hashToken(secret string) string {
	sum := sha256.Sum256([]byte(secret))
	return hex.EncodeToString(sum[:])
}

// CreateToken makes a new API token for userID and returns it with the secret,
// which is shown once and never stored. ttl 0 means no expiry.
func (s *Store) CreateToken(ctx context.Context, userID int64, name string, ttl time.Duration) (*APIToken, string, error) {
	name, err := tokenName(name)
	if err != nil {
		return nil, "", err
	}
	if ttl < 0 {
		return nil, "", invalid("expires", "must be in the future")
	}
	secret := TokenPrefix + randomString(32)
	t := &APIToken{UserID: userID, Name: name, TokenHash: hashToken(secret), Prefix: secret[:len(TokenPrefix)+6]}
	if ttl > 0 {
		exp := s.now().Add(ttl)
		t.ExpiresAt = &exp
	}
	now := s.now()
	full := tooMany(CodeTooManyTokens, Reasonf("you already have the most live API tokens an account may have (%d); revoke one you no longer use (on the API tokens page, or DELETE /api/v1/tokens/{id}) to make room", MaxAPITokensPerUser))
	err = s.withCap(ctx, MaxAPITokensPerUser, full, func(tx *gorm.DB) *gorm.DB {
		return tx.Model(&APIToken{}).Where("user_id = ? AND revoked_at IS NULL AND (expires_at IS NULL OR expires_at > ?)", userID, now)
	}, func(tx *gorm.DB) error { return tx.Create(t).Error })
	if err != nil {
		if uniqueViolation(err) {
			return nil, "", taken("name", "you already have a token with this name")
		}
		return nil, "", err
	}
	return t, secret, nil
}

// ListTokens returns a user's tokens, newest first.
func (s *Store) ListTokens(ctx context.Context, userID int64) ([]APIToken, error) {
	var ts []APIToken
	err := s.db.WithContext(ctx).Where("user_id = ?", userID).Order("created_at DESC, id DESC").Find(&ts).Error
	return ts, err
}

// RevokeToken revokes a token of userID (ownership is part of the query)
// and returns its hash, which names what it authenticated (the streams it
// opened end with it).
func (s *Store) RevokeToken(ctx context.Context, userID, tokenID int64) (tokenHash string, err error) {
	// Through gorm, so that from InTx it is part of the transaction.
	err = s.db.WithContext(ctx).Raw(`UPDATE api_tokens SET revoked_at = ?
		WHERE id = ? AND user_id = ? AND revoked_at IS NULL RETURNING token_hash`, s.now(), tokenID, userID).Scan(&tokenHash).Error
	if err == nil && tokenHash == "" {
		err = ErrNotFound
	}
	return tokenHash, err
}

// ErrBadToken is returned for unknown, revoked or expired tokens alike.
var ErrBadToken = errors.New("invalid or expired API token")

// UserByToken resolves a bearer secret to its active, enabled user.
func (s *Store) UserByToken(ctx context.Context, secret string) (*User, error) {
	u, _, err := s.AuthByToken(ctx, secret)
	return u, err
}

// AuthByToken is UserByToken with the token itself, whose expiry bounds
// the tokens a request it authenticates may make.
func (s *Store) AuthByToken(ctx context.Context, secret string) (*User, *APIToken, error) {
	if !strings.HasPrefix(secret, TokenPrefix) {
		return nil, nil, ErrBadToken
	}
	var t APIToken
	if err := s.db.WithContext(ctx).Where("token_hash = ?", hashToken(secret)).First(&t).Error; err != nil {
		if errors.Is(notFound(err), ErrNotFound) {
			return nil, nil, ErrBadToken
		}
		return nil, nil, err
	}
	now := s.now()
	if !t.Active(now) {
		return nil, nil, ErrBadToken
	}
	u, err := s.UserByID(ctx, t.UserID)
	if err != nil {
		return nil, nil, err
	}
	if u.Disabled {
		return nil, nil, ErrBadToken
	}
	// Record use at most once a minute: a write per API call would serialise
	// every request on SQLite's single writer.
	if t.LastUsedAt == nil || now.Sub(*t.LastUsedAt) > time.Minute {
		s.db.WithContext(ctx).Model(&APIToken{}).Where("id = ?", t.ID).Update("last_used_at", now)
	}
	return u, &t, nil
}

// tokenName checks a token's name (an API token's or a workbench
// token's): 1–64 printable characters. A control character (a NUL, an
// escape sequence) would reach the tokens table of a page and a terminal
// listing them as it is.
func tokenName(name string) (string, error) {
	name = strings.TrimSpace(name)
	if name == "" || utf8.RuneCountInString(name) > 64 || !utf8.ValidString(name) || strings.ContainsFunc(name, unicode.IsControl) {
		return "", invalid("name", "give the token a name of 1–64 printable characters")
	}
	return name, nil
}
