package models

import (
	"context"
	"database/sql"
	"errors"
)

// Settings rows of the workbench egress policy (issue 9). The values are
// validated by the orchestrator before they are stored; models only keeps
// them.
const (
	settingEgressMode  = "egress_mode"
	settingEgressAllow = "egress_allow"
)

// EgressSetting returns the stored egress mode and allow-list (CIDRs
// separated by commas); set is false when an admin never chose one, so the
// configured default applies.
func (s *Store) EgressSetting(ctx context.Context) (mode, allow string, set bool, err error) {
	err = s.sql.QueryRowContext(ctx, "SELECT value FROM settings WHERE key = ?", settingEgressMode).Scan(&mode)
	if errors.Is(err, sql.ErrNoRows) {
		return "", "", false, nil
	}
	if err != nil {
		return "", "", false, err
	}
	allow, err = s.Setting(ctx, settingEgressAllow)
	return mode, allow, true, err
}

// SetEgressSetting stores the egress mode and allow-list together.
func (s *Store) SetEgressSetting(ctx context.Context, mode, allow string) error {
	tx, err := s.sql.BeginTx(ctx, nil)
	if err != nil {
		return err
	}
	defer func() { _ = tx.Rollback() }()
	const upsert = "INSERT INTO settings (key, value) VALUES (?, ?) ON CONFLICT(key) DO UPDATE SET value = excluded.value"
	if _, err := tx.ExecContext(ctx, upsert, settingEgressMode, mode); err != nil {
		return err
	}
	if _, err := tx.ExecContext(ctx, upsert, settingEgressAllow, allow); err != nil {
		return err
	}
	return tx.Commit()
}
