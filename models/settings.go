package models

import (
	"context"
	"database/sql"
	"errors"
	"time"

	"gorm.io/gorm"
)

// Setting returns a stored setting, or "" if unset.
func (s *Store) Setting(ctx context.Context, key string) (string, error) {
	var v string
	// Through gorm, so that from InTx it reads the transaction's writes.
	err := s.db.WithContext(ctx).Raw("SELECT value FROM settings WHERE key = ?", key).Row().Scan(&v)
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
// original's containers nor its GPUs. In the same transaction the copy
// forgets the containers its records name (a delete in the copy removed
// the original's container by that id), and what waits in its queue —
// queued launches, preempted runs waiting to resume — and launches under
// way are stopped with the reason, so the copy starts nothing by itself on
// GPUs the original holds.
// The running workbenches recorded in the copy are then unknown to the
// engine and are closed at their last heartbeat, with their own reason:
// the moment of the change is kept (NewIdentityAt), and a run that
// started before it is the original's.
func (s *Store) NewInstallID(ctx context.Context) (string, error) {
	id := randomString(9)
	err := s.db.WithContext(ctx).Transaction(func(tx *gorm.DB) error {
		if err := tx.Exec("INSERT INTO settings (key, value) VALUES ('install_id', ?) ON CONFLICT(key) DO UPDATE SET value = excluded.value", id).Error; err != nil {
			return err
		}
		if err := tx.Exec("INSERT INTO settings (key, value) VALUES (?, ?) ON CONFLICT(key) DO UPDATE SET value = excluded.value",
			newIdentityAtKey, s.now().UTC().Format(time.RFC3339Nano)).Error; err != nil {
			return err
		}
		if err := tx.Exec("UPDATE workbenches SET container_id = '' WHERE container_id <> ''").Error; err != nil {
			return err
		}
		// Launches under way in the original when the data was copied
		// hold GPUs in the copy, and its reconciliation would finish
		// them there: they stop too, giving their units back.
		waiting := append([]string{StateQueued, StatePreempted}, LaunchingStates...)
		if err := tx.Exec("DELETE FROM gpu_allocations WHERE workbench_id IN (SELECT id FROM workbenches WHERE state IN ?)", LaunchingStates).Error; err != nil {
			return err
		}
		return tx.Exec(`UPDATE workbenches SET state = ?, reason = ?, queued_at = NULL, queue_expires_at = NULL, queue_position = 0, queue_ahead = 0, queue_reason = '', updated_at = ?
			WHERE deleted_at IS NULL AND state IN ?`, StateStopped,
			Reasonf("copied with the data of another install (serve --new-identity): start it again here if it should run on this one"), s.now(),
			waiting).Error
	})
	if err != nil {
		return "", err
	}
	return id, nil
}

// newIdentityAtKey is the setting that keeps when this data was last given
// a new install id (NewInstallID).
const newIdentityAtKey = "new_identity_at"

// NewIdentityAt is when this data was last given a new install id
// (serve --new-identity); zero if never. A run recorded as started before
// it is a copy of the original install's, whose container this install
// does not manage.
func (s *Store) NewIdentityAt(ctx context.Context) (time.Time, error) {
	v, err := s.Setting(ctx, newIdentityAtKey)
	if err != nil || v == "" {
		return time.Time{}, err
	}
	return time.Parse(time.RFC3339Nano, v)
}

// ErrCurrencyChanged refuses a start whose currency differs from the one
// the data's prices and charges were made in.
type ErrCurrencyChanged struct{ Stored, Configured string }

func (e *ErrCurrencyChanged) Error() string {
	return "the prices and charges in this data are in " + e.Stored + ", and WORKBENCH_CURRENCY / --currency is " + e.Configured +
		": amounts are stored without a currency, so starting would relabel every past charge (" + e.Stored + " 2.50 would read " +
		e.Configured + " 2.50). Set it back to " + e.Stored + ", or start a new data directory for " + e.Configured
}

// PinCurrency records the currency of this data's amounts on first use
// and refuses (ErrCurrencyChanged) a later start in another one while the
// ledger holds any line: an amount is a number of micro-units, and the
// currency beside it on every page and CSV comes from the setting. Data
// without charges yet (an install still being set up) takes the new one.
func (s *Store) PinCurrency(ctx context.Context, code string) error {
	if _, err := s.sql.ExecContext(ctx, "INSERT OR IGNORE INTO settings (key, value) VALUES ('currency', ?)", code); err != nil {
		return err
	}
	stored, err := s.Setting(ctx, "currency")
	if err != nil || stored == code {
		return err
	}
	var lines int64
	if err := s.sql.QueryRowContext(ctx, "SELECT COUNT(*) FROM (SELECT 1 FROM ledger_entries LIMIT 1)").Scan(&lines); err != nil {
		return err
	}
	if lines > 0 {
		return &ErrCurrencyChanged{Stored: stored, Configured: code}
	}
	return s.SetSetting(ctx, "currency", code)
}
