package models

import (
	"context"
	"database/sql"
	"errors"
)

// Setting returns a stored setting, or "" if unset.
func (s *Store) Setting(ctx context.Context, key string) (string, error) {
	var v string
	err := s.sql.QueryRowContext(ctx, "SELECT value FROM settings WHERE key = ?", key).Scan(&v)
	if errors.Is(err, sql.ErrNoRows) {
		return "", nil
	}
	return v, err
}

// SetSetting stores a setting.
func (s *Store) SetSetting(ctx context.Context, key, value string) error {
	// Through gorm, so that from InTx it is part of the transaction.
	return s.db.WithContext(ctx).Exec("INSERT INTO settings (key, value) VALUES (?, ?) ON CONFLICT(key) DO UPDATE SET value = excluded.value", key, value).Error
}

// InstallID returns this installation's random id, creating it on first use.
// It is put on every Docker object so two portals on one engine never touch
// each other's containers.
func (s *Store) InstallID(ctx context.Context) (string, error) {
	id := randomString(9)
	// INSERT OR IGNORE then read: two processes racing agree on one id.
	if _, err := s.sql.ExecContext(ctx, "INSERT OR IGNORE INTO settings (key, value) VALUES ('install_id', ?)", id); err != nil {
		return "", err
	}
	return s.Setting(ctx, "install_id")
}

// NewInstallID gives this data a new install id: a copy of an install
// (a restored backup) started beside the original must not manage the
// original's containers. The workbenches recorded in the copy are then
// unknown to the engine and are closed at their last heartbeat.
func (s *Store) NewInstallID(ctx context.Context) (string, error) {
	id := randomString(9)
	if _, err := s.sql.ExecContext(ctx, "INSERT INTO settings (key, value) VALUES ('install_id', ?) ON CONFLICT(key) DO UPDATE SET value = excluded.value", id); err != nil {
		return "", err
	}
	return id, nil
}
