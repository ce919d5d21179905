package models

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"time"

	"gorm.io/gorm"
)

// Revoked counts what RevokeUserAccess ended, for the audit log.
type Revoked struct {
	Tokens           int64 `json:"tokens"`
	NotebookSessions int64 `json:"notebook_sessions"`
}

// RevokeUserAccess ends every credential of a user at once, in one
// transaction: portal sessions (by moving the user to a new auth epoch),
// API and workbench tokens (revoked) and notebook-domain codes and sessions (deleted).
// Called on password reset and disable.
func (s *Store) RevokeUserAccess(ctx context.Context, userID int64) (Revoked, error) {
	var out Revoked
	now := s.now().UTC()
	err := s.db.WithContext(ctx).Transaction(func(tx *gorm.DB) error {
		res := tx.Model(&User{}).Where("id = ?", userID).Updates(map[string]any{"auth_epoch": gorm.Expr("auth_epoch + 1"), "updated_at": now})
		if res.Error != nil {
			return res.Error
		}
		if res.RowsAffected == 0 {
			return ErrNotFound
		}
		res = tx.Model(&APIToken{}).Where("user_id = ? AND revoked_at IS NULL", userID).Update("revoked_at", now)
		if res.Error != nil {
			return res.Error
		}
		out.Tokens = res.RowsAffected
		res = tx.Model(&WorkbenchToken{}).Where("user_id = ? AND revoked_at IS NULL", userID).Update("revoked_at", now)
		if res.Error != nil {
			return res.Error
		}
		out.Tokens += res.RowsAffected
		if err := tx.Where("user_id = ?", userID).Delete(&NotebookCode{}).Error; err != nil {
			return err
		}
		res = tx.Where("user_id = ?", userID).Delete(&NotebookSession{})
		out.NotebookSessions = res.RowsAffected
		return res.Error
	})
	return out, err
}

// HashSecret is the stored form of a session token or one-time code: they
// carry 256 bits of entropy, so SHA-256 is enough and cheap per request.
func HashSecret(secret string) string {
	sum := sha256.Sum256([]byte(secret))
	return hex.EncodeToString(sum[:])
}

// NotebookCode is a one-time code that opens one workbench on the notebook
// domain for one user, in the one browser that holds the state cookie whose
// hash is BrowserStateHash. Single use, short-lived.
type NotebookCode struct {
	CodeHash          string `gorm:"primaryKey"`
	UserID            int64
	WorkbenchID       string
	PortalSessionHash string
	BrowserStateHash  string
	ExpiresAt         time.Time
}

// NotebookSession is a session of the notebook host {id}.<domain>: it
// opens that one workbench only.
type NotebookSession struct {
	TokenHash         string `gorm:"primaryKey"`
	UserID            int64
	WorkbenchID       string
	PortalSessionHash string
	ExpiresAt         time.Time
	CreatedAt         time.Time
}

// ErrBadCode is returned for unknown, used or expired codes alike.
var ErrBadCode = errors.New("invalid or expired code")

// CreateNotebookCode issues a code for (user, workbench) valid for ttl, to be
// exchanged only by the browser whose state cookie hashes to
// browserStateHash, and returns the secret, which only the URL the browser
// follows carries.
func (s *Store) CreateNotebookCode(ctx context.Context, userID int64, workbenchID, portalSessionHash, browserStateHash string, ttl time.Duration) (string, error) {
	code := randomString(32)
	c := NotebookCode{CodeHash: HashSecret(code), UserID: userID, WorkbenchID: workbenchID,
		PortalSessionHash: portalSessionHash, BrowserStateHash: browserStateHash, ExpiresAt: s.now().UTC().Add(ttl)}
	return code, s.db.WithContext(ctx).Create(&c).Error
}

// ExchangeNotebookCode uses up a code for workbenchID, presented by the
// browser whose state cookie hashes to browserStateHash, and creates a
// notebook session in its place, valid for ttl. The code is deleted in the
// same transaction, so two exchanges of one code cannot both succeed.
func (s *Store) ExchangeNotebookCode(ctx context.Context, code, workbenchID, browserStateHash string, ttl time.Duration) (*NotebookSession, string, error) {
	now := s.now().UTC()
	var ns *NotebookSession
	refused := false
	token := randomString(32)
	err := s.db.WithContext(ctx).Transaction(func(tx *gorm.DB) error {
		var c NotebookCode
		if err := tx.Where("code_hash = ?", HashSecret(code)).First(&c).Error; err != nil {
			if errors.Is(err, gorm.ErrRecordNotFound) {
				return ErrBadCode
			}
			return err
		}
		if err := tx.Delete(&c).Error; err != nil {
			return err
		}
		// Expired codes, codes for another workbench and codes brought by
		// another browser (a link someone was sent) are used up too.
		if !now.Before(c.ExpiresAt) || c.WorkbenchID != workbenchID ||
			c.BrowserStateHash == "" || c.BrowserStateHash != browserStateHash {
			refused = true // commit the deletion, then refuse
			return nil
		}
		ns = &NotebookSession{TokenHash: HashSecret(token), UserID: c.UserID, WorkbenchID: c.WorkbenchID,
			PortalSessionHash: c.PortalSessionHash, ExpiresAt: now.Add(ttl), CreatedAt: now}
		return tx.Create(ns).Error
	})
	if err != nil {
		return nil, "", err
	}
	if refused {
		return nil, "", ErrBadCode
	}
	return ns, token, nil
}

// NotebookSessionByToken returns the live notebook session of a cookie.
func (s *Store) NotebookSessionByToken(ctx context.Context, token string) (*NotebookSession, error) {
	var ns NotebookSession
	err := s.db.WithContext(ctx).Where("token_hash = ? AND expires_at > ?", HashSecret(token), s.now().UTC()).First(&ns).Error
	if err != nil {
		return nil, notFound(err)
	}
	return &ns, nil
}

// DeleteNotebookSessionsOf ends the notebook sessions (and unused codes)
// made from one portal session: logging out of the portal ends them.
func (s *Store) DeleteNotebookSessionsOf(ctx context.Context, portalSessionHash string) (int64, error) {
	db := s.db.WithContext(ctx)
	if err := db.Where("portal_session_hash = ?", portalSessionHash).Delete(&NotebookCode{}).Error; err != nil {
		return 0, err
	}
	res := db.Where("portal_session_hash = ?", portalSessionHash).Delete(&NotebookSession{})
	return res.RowsAffected, res.Error
}

// DeleteExpiredNotebookSessions removes expired codes and sessions.
func (s *Store) DeleteExpiredNotebookSessions(ctx context.Context) error {
	now := s.now().UTC()
	db := s.db.WithContext(ctx)
	if err := db.Where("expires_at <= ?", now).Delete(&NotebookCode{}).Error; err != nil {
		return err
	}
	return db.Where("expires_at <= ?", now).Delete(&NotebookSession{}).Error
}

// ChangePassword is a user changing their own password: the new hash and a
// new auth epoch commit together, so every browser session made before it
// ends (a session that knew the old password may not be the user's), as do
// the notebook-domain sessions and unspent codes derived from them. API
// tokens stay valid: they are not derived from the password, and scripts
// using them are the user's own. It returns the new epoch, for the session
// that made the change to keep.
func (s *Store) ChangePassword(ctx context.Context, userID int64, password string) (int64, error) {
	if err := validatePassword(password); err != nil {
		return 0, err
	}
	hash, err := s.hashPassword(ctx, password)
	if err != nil {
		return 0, err
	}
	var epoch []int64
	err = s.db.WithContext(ctx).Transaction(func(tx *gorm.DB) error {
		res := tx.Model(&User{}).Where("id = ?", userID).
			Updates(map[string]any{"password_hash": hash, "auth_epoch": gorm.Expr("auth_epoch + 1"), "updated_at": s.now().UTC()})
		if res.Error != nil {
			return res.Error
		}
		if res.RowsAffected == 0 {
			return ErrNotFound
		}
		if err := tx.Where("user_id = ?", userID).Delete(&NotebookCode{}).Error; err != nil {
			return err
		}
		if err := tx.Where("user_id = ?", userID).Delete(&NotebookSession{}).Error; err != nil {
			return err
		}
		return tx.Model(&User{}).Where("id = ?", userID).Pluck("auth_epoch", &epoch).Error
	})
	if err != nil {
		return 0, err
	}
	if len(epoch) != 1 {
		return 0, ErrNotFound
	}
	return epoch[0], nil
}
