package models

import (
	"context"
	"errors"
	"strings"
	"time"

	"gorm.io/gorm"
)

// WorkbenchTokenPrefix marks tokens scoped to one workbench. It differs from
// TokenPrefix (API tokens) so the proxy tells the two apart without a
// lookup, and so neither kind can be used where the other is expected.
const WorkbenchTokenPrefix = "wbk_"

// WorkbenchToken lets a Jupyter client (VS Code, jupyter console, curl)
// reach one workbench through the proxy, and nothing else of the portal:
// JupyterHub's access:servers idea. Only the SHA-256 of the secret is kept.
type WorkbenchToken struct {
	ID          int64      `gorm:"primaryKey" json:"id"`
	UserID      int64      `json:"-"`
	WorkbenchID string     `json:"workbench_id"`
	Name        string     `json:"name"`
	TokenHash   string     `json:"-"`
	Prefix      string     `json:"prefix"`
	ExpiresAt   *time.Time `json:"expires_at"`
	LastUsedAt  *time.Time `json:"last_used_at"`
	RevokedAt   *time.Time `json:"revoked_at"`
	CreatedAt   time.Time  `json:"created_at"`
}

// Active reports whether the token can still be used at now.
func (t *WorkbenchToken) Active(now time.Time) bool {
	return t.RevokedAt == nil && (t.ExpiresAt == nil || now.Before(*t.ExpiresAt))
}

// CreateWorkbenchToken makes a token for workbench wbID, which userID must
// own, and returns it with the secret (shown once, never stored). ttl 0
// means no expiry.
func (s *Store) CreateWorkbenchToken(ctx context.Context, userID int64, wbID, name string, ttl time.Duration) (*WorkbenchToken, string, error) {
	name, err := tokenName(name)
	if err != nil {
		return nil, "", err
	}
	if ttl < 0 {
		return nil, "", invalid("expires", "must be in the future")
	}
	var wb Workbench
	if err := s.db.WithContext(ctx).Select("id", "owner_id").Where("id = ? AND deleted_at IS NULL", wbID).First(&wb).Error; err != nil {
		return nil, "", notFound(err)
	}
	if wb.OwnerID != userID {
		return nil, "", ErrNotFound
	}
	secret := WorkbenchTokenPrefix + randomString(32)
	t := &WorkbenchToken{UserID: userID, WorkbenchID: wbID, Name: name, TokenHash: hashToken(secret),
		Prefix: secret[:len(WorkbenchTokenPrefix)+6], CreatedAt: s.now()}
	if ttl > 0 {
		exp := s.now().Add(ttl)
		t.ExpiresAt = &exp
	}
	full := tooMany(CodeTooManyTokens, Reasonf("this workbench already has the most live access tokens a workbench may have (%d); revoke one you no longer use (on the workbench page, or DELETE /api/v1/workbenches/{id}/tokens/{token id}) to make room", MaxWorkbenchTokensPerWorkbench))
	err = s.withCap(ctx, MaxWorkbenchTokensPerWorkbench, full, func(tx *gorm.DB) *gorm.DB {
		return tx.Model(&WorkbenchToken{}).Where("workbench_id = ? AND revoked_at IS NULL AND (expires_at IS NULL OR expires_at > ?)", wbID, s.now())
	}, func(tx *gorm.DB) error { return tx.Create(t).Error })
	if err != nil {
		if uniqueViolation(err) {
			return nil, "", taken("name", "this workbench already has a token with this name")
		}
		return nil, "", err
	}
	return t, secret, nil
}

// ListWorkbenchTokens returns the tokens of one workbench of userID, newest
// first.
func (s *Store) ListWorkbenchTokens(ctx context.Context, userID int64, wbID string) ([]WorkbenchToken, error) {
	var ts []WorkbenchToken
	err := s.db.WithContext(ctx).Where("user_id = ? AND workbench_id = ?", userID, wbID).
		Order("created_at DESC, id DESC").Find(&ts).Error
	return ts, err
}

// RevokeWorkbenchToken revokes a token of userID's workbench wbID
// (ownership and scope are part of the query) and returns its hash, which
// the proxy's caches and live connections are keyed by.
func (s *Store) RevokeWorkbenchToken(ctx context.Context, userID int64, wbID string, tokenID int64) (string, error) {
	var t WorkbenchToken
	err := s.db.WithContext(ctx).Where("id = ? AND user_id = ? AND workbench_id = ?", tokenID, userID, wbID).First(&t).Error
	if err != nil {
		return "", notFound(err)
	}
	res := s.db.WithContext(ctx).Model(&WorkbenchToken{}).
		Where("id = ? AND revoked_at IS NULL", t.ID).Update("revoked_at", s.now())
	if res.Error != nil {
		return "", res.Error
	}
	if res.RowsAffected == 0 {
		return "", ErrNotFound
	}
	return t.TokenHash, nil
}

// ErrBadWorkbenchToken is returned for unknown, revoked or expired
// workbench tokens, for a token of another workbench, and for a token
// whose user is disabled, alike.
var ErrBadWorkbenchToken = errors.New("invalid or expired workbench token")

// WorkbenchTokenUser checks that secret is an active token for workbench
// wbID and returns its enabled owner.
func (s *Store) WorkbenchTokenUser(ctx context.Context, secret, wbID string) (*User, error) {
	if !strings.HasPrefix(secret, WorkbenchTokenPrefix) {
		return nil, ErrBadWorkbenchToken
	}
	var t WorkbenchToken
	if err := s.db.WithContext(ctx).Where("token_hash = ?", hashToken(secret)).First(&t).Error; err != nil {
		if errors.Is(notFound(err), ErrNotFound) {
			return nil, ErrBadWorkbenchToken
		}
		return nil, err
	}
	now := s.now()
	if !t.Active(now) || t.WorkbenchID != wbID {
		return nil, ErrBadWorkbenchToken
	}
	u, err := s.UserByID(ctx, t.UserID)
	if err != nil {
		if errors.Is(err, ErrNotFound) {
			return nil, ErrBadWorkbenchToken
		}
		return nil, err
	}
	if u.Disabled {
		return nil, ErrBadWorkbenchToken
	}
	// Record use at most once a minute: a notebook client makes many
	// requests a second, and SQLite has one writer.
	if t.LastUsedAt == nil || now.Sub(*t.LastUsedAt) > time.Minute {
		s.db.WithContext(ctx).Model(&WorkbenchToken{}).Where("id = ?", t.ID).Update("last_used_at", now)
	}
	return u, nil
}
