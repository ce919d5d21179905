package models

import (
	"context"
	"crypto/rand"
	"database/sql"
	"errors"
	"time"

	"gorm.io/gorm"
)

// Login devices (OWASP's "device cookies"): a browser that logged in as a
// user gets a random token in a cookie, and while the token is live a login
// from that browser is not held back by its address's delay
// (handlers.LoginThrottle). They are rows, not the portal's memory: a
// restart or an upgrade used to forget every token, and colleagues behind a
// lab's one NAT address were held back again by someone guessing there.
// Only the token's SHA-256 is stored (hashToken, as for API tokens): the
// token has 130 random bits, and a read of the database file yields no
// cookie to replay.

// LoginDeviceTrustFor is how long a browser's token stays trusted after the
// login that gave it (each login gives a new one); the cookie lasts as long.
const LoginDeviceTrustFor = 90 * 24 * time.Hour

// MaxLoginDevices bounds the live tokens kept: past it a login gets none
// (its browser is not trusted), so a script logging in without cookies
// cannot grow the table without bound before the sweep.
const MaxLoginDevices = 100_000

// NewLoginDevice makes a token for a browser that just logged in as userID
// at now and forgets the one it sent (old, "" for none). It returns ""
// when MaxLoginDevices live tokens exist already.
func (s *Store) NewLoginDevice(ctx context.Context, userID int64, old string, now time.Time) (string, error) {
	token := rand.Text()
	now = now.UTC()
	err := s.db.WithContext(ctx).Transaction(func(tx *gorm.DB) error {
		if old != "" {
			if err := tx.Exec("DELETE FROM login_devices WHERE token_hash = ?", hashToken(old)).Error; err != nil {
				return err
			}
		}
		var live int64
		if err := tx.Raw("SELECT COUNT(*) FROM login_devices WHERE expires_at > ?", now).Scan(&live).Error; err != nil {
			return err
		}
		if live >= MaxLoginDevices {
			token = ""
			return nil
		}
		return tx.Exec("INSERT INTO login_devices (token_hash, user_id, expires_at) VALUES (?, ?, ?)",
			hashToken(token), userID, now.Add(LoginDeviceTrustFor)).Error
	})
	if err != nil {
		return "", err
	}
	return token, nil
}

// LoginDeviceTrusted reports whether token is a live one of a browser that
// logged in as the account now named username. The token follows the
// account: a renamed user's browser stays known, and a deleted account's
// tokens go with it (DeleteUser), so a new account given the old name
// inherits none.
func (s *Store) LoginDeviceTrusted(ctx context.Context, username, token string, now time.Time) (bool, error) {
	if token == "" {
		return false, nil
	}
	var one int
	err := s.sql.QueryRowContext(ctx, `SELECT 1 FROM login_devices d JOIN users u ON u.id = d.user_id
		WHERE d.token_hash = ? AND d.expires_at > ? AND u.username = ? AND u.deleted_at IS NULL`,
		hashToken(token), now.UTC(), username).Scan(&one)
	if errors.Is(err, sql.ErrNoRows) {
		return false, nil
	}
	return err == nil, err
}

// DeleteExpiredLoginDevices removes tokens past their trust; the server's
// periodic session cleanup calls it.
func (s *Store) DeleteExpiredLoginDevices(ctx context.Context) (int64, error) {
	res := s.db.WithContext(ctx).Exec("DELETE FROM login_devices WHERE expires_at <= ?", s.now())
	return res.RowsAffected, res.Error
}
