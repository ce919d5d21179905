package models

import (
	"context"

	"gorm.io/gorm"
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
	// Through gorm, not the raw *sql.DB, so that it reads inside InTx.
	var rows []struct{ Key, Value string }
	err = s.db.WithContext(ctx).Raw("SELECT key, value FROM settings WHERE key IN (?, ?)", settingEgressMode, settingEgressAllow).
		Scan(&rows).Error
	if err != nil {
		return "", "", false, err
	}
	for _, r := range rows {
		switch r.Key {
		case settingEgressMode:
			mode, set = r.Value, true
		case settingEgressAllow:
			allow = r.Value
		}
	}
	if !set {
		return "", "", false, nil
	}
	return mode, allow, true, nil
}

// SetEgressSetting stores the egress mode and allow-list together (one
// transaction, nested in the caller's under InTx).
func (s *Store) SetEgressSetting(ctx context.Context, mode, allow string) error {
	const upsert = "INSERT INTO settings (key, value) VALUES (?, ?) ON CONFLICT(key) DO UPDATE SET value = excluded.value"
	return s.db.WithContext(ctx).Transaction(func(tx *gorm.DB) error {
		if err := tx.Exec(upsert, settingEgressMode, mode).Error; err != nil {
			return err
		}
		return tx.Exec(upsert, settingEgressAllow, allow).Error
	})
}
