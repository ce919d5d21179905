package models

import (
	"context"
	"errors"
	"time"

	"gorm.io/gorm"

	"workbench/models/pricing"
)

// StorageInterval is a span during which a home volume existed at a size.
type StorageInterval struct {
	ID            int64 `gorm:"primaryKey"`
	UserID        int64
	Volume        string
	SizeMilliGiB  int64 `gorm:"column:size_milli_gib"`
	StartedAt     time.Time
	HeartbeatAt   time.Time
	EndedAt       *time.Time
	BilledThrough *time.Time
	Settled       bool
}

// billedEnd is where billing of a closed interval ends: its start plus
// its seconds, the last begun one counted whole (storageSpan).
func (iv *StorageInterval) billedEnd() time.Time {
	_, end := pricing.BilledSpan(iv.StartedAt, *iv.EndedAt, 0)
	return end
}

// OpenStorageIntervals returns the open storage intervals by volume name.
func (s *Store) OpenStorageIntervals(ctx context.Context) (map[string]StorageInterval, error) {
	var rows []StorageInterval
	if err := s.db.WithContext(ctx).Where("ended_at IS NULL").Find(&rows).Error; err != nil {
		return nil, err
	}
	out := make(map[string]StorageInterval, len(rows))
	for _, r := range rows {
		out[r.Volume] = r
	}
	return out, nil
}

// RecordVolume notes that volume exists at size (milli-GiB) at t: it opens
// an interval, keeps the open one alive, or — when the size changed by at
// least resizeMilli — closes it and opens one at the new size, in one
// transaction.
//
// created is when the volume was made (zero if unknown): a volume seen for
// the first time is billed from then, not from this measurement — up to a
// metering period later, and a volume that lived less than one was never
// billed (SPEC §6 rule 4: while it exists). Never from before the end of
// an earlier interval of the same name.
func (s *Store) RecordVolume(ctx context.Context, userID int64, volume string, size int64, t, created time.Time, resizeMilli int64) error {
	t = t.UTC()
	return s.db.WithContext(ctx).Transaction(func(tx *gorm.DB) error {
		var cur StorageInterval
		err := tx.Where("volume = ? AND ended_at IS NULL", volume).First(&cur).Error
		switch {
		case errors.Is(err, gorm.ErrRecordNotFound):
			start := t
			if !created.IsZero() && created.Before(t) {
				start = created.UTC()
				var last StorageInterval
				if err := tx.Where("volume = ? AND ended_at IS NOT NULL", volume).Order("ended_at DESC").First(&last).Error; err == nil && last.billedEnd().After(start) {
					start = last.billedEnd()
				} else if err != nil && !errors.Is(err, gorm.ErrRecordNotFound) {
					return err
				}
			}
			return tx.Create(&StorageInterval{UserID: userID, Volume: volume, SizeMilliGiB: size, StartedAt: start, HeartbeatAt: t}).Error
		case err != nil:
			return err
		default:
			diff := cur.SizeMilliGiB - size
			if diff < 0 {
				diff = -diff
			}
			if diff < resizeMilli {
				return tx.Model(&cur).Update("heartbeat_at", t).Error
			}
			if err := tx.Model(&cur).Updates(map[string]any{"ended_at": t, "heartbeat_at": t}).Error; err != nil {
				return err
			}
		}
		// The old size is billed to its next whole second (SPEC §6 rule
		// 1), so the new one starts there: started at t, the fraction of
		// a second was billed at both sizes.
		cur.EndedAt = &t
		return tx.Create(&StorageInterval{UserID: userID, Volume: volume, SizeMilliGiB: size, StartedAt: cur.billedEnd(), HeartbeatAt: t}).Error
	})
}

// MarkHomeMade notes that the portal made userID's home volume at t.
func (s *Store) MarkHomeMade(ctx context.Context, userID int64, t time.Time) error {
	return s.db.WithContext(ctx).Exec("UPDATE users SET home_made_at = ? WHERE id = ?", t.UTC(), userID).Error
}

// ForgetHome ends what the portal knew of userID's home volume, gone
// though the portal did not remove it: its open storage interval ends at
// its last sighting, and the mark of its making (MarkHomeMade) goes.
//
// known says whether there was anything to forget (an interval or the
// mark), and lastSeen when the volume was last known to exist: of two
// callers that notice the same volume gone (metering and a start), one
// tells, and a volume the portal removed itself (RemovedHome) is no loss.
func (s *Store) ForgetHome(ctx context.Context, userID int64, volume string) (known bool, lastSeen time.Time, err error) {
	err = s.db.WithContext(ctx).Transaction(func(tx *gorm.DB) error {
		var made struct{ HomeMadeAt *time.Time }
		if err := tx.Table("users").Select("home_made_at").Where("id = ?", userID).Take(&made).Error; err != nil && !errors.Is(err, gorm.ErrRecordNotFound) {
			return err
		}
		if made.HomeMadeAt != nil {
			known, lastSeen = true, *made.HomeMadeAt
			if err := tx.Exec("UPDATE users SET home_made_at = NULL WHERE id = ?", userID).Error; err != nil {
				return err
			}
		}
		ended, seen, err := endStorageAtLastSighting(tx, volume)
		if ended {
			known = true
			if seen.After(lastSeen) {
				lastSeen = seen
			}
		}
		return err
	})
	return known, lastSeen, err
}

// EndStorageAtLastSighting ends volume's open storage interval at its last
// measurement and nothing else (the owner's mark of a home made stays: it
// is this install's, and the volume is not). For a copy started with
// --new-identity, whose intervals of the original's home volumes this
// install never sees again. ended says whether one was open.
func (s *Store) EndStorageAtLastSighting(ctx context.Context, volume string) (ended bool, lastSeen time.Time, err error) {
	err = s.db.WithContext(ctx).Transaction(func(tx *gorm.DB) error {
		var err error
		ended, lastSeen, err = endStorageAtLastSighting(tx, volume)
		return err
	})
	return ended, lastSeen, err
}

// endStorageAtLastSighting ends volume's open storage interval, if any,
// at its last measurement (its heartbeat), in tx.
func endStorageAtLastSighting(tx *gorm.DB, volume string) (ended bool, lastSeen time.Time, err error) {
	var cur StorageInterval
	switch err := tx.Where("volume = ? AND ended_at IS NULL", volume).First(&cur).Error; {
	case errors.Is(err, gorm.ErrRecordNotFound):
		return false, time.Time{}, nil
	case err != nil:
		return false, time.Time{}, err
	}
	err = tx.Exec("UPDATE storage_intervals SET ended_at = heartbeat_at WHERE id = ? AND ended_at IS NULL", cur.ID).Error
	return err == nil, cur.HeartbeatAt, err
}

// RemovedHome ends what the portal knew of userID's home volume, which it
// has just removed: its storage interval ends at the removal (not at its
// last measurement, up to a metering period before), and the mark of its
// making goes.
func (s *Store) RemovedHome(ctx context.Context, userID int64, volume string, t time.Time) error {
	return s.db.WithContext(ctx).Transaction(func(tx *gorm.DB) error {
		if err := tx.Exec("UPDATE users SET home_made_at = NULL WHERE id = ?", userID).Error; err != nil {
			return err
		}
		// A resize measured just before the removal opened the new size
		// at the old one's billed end, the next whole second: up to a
		// second after t. It ends too (at its start: nothing billed), or
		// it stayed open, the user kept the home's size against their
		// storage quota, and the next metering told them their home was
		// lost.
		var open []StorageInterval
		if err := tx.Where("volume = ? AND ended_at IS NULL AND started_at <= ?", volume, t.UTC().Add(time.Second)).Find(&open).Error; err != nil {
			return err
		}
		for _, iv := range open {
			end := t.UTC()
			if iv.StartedAt.After(end) {
				end = iv.StartedAt
			}
			if err := tx.Model(&StorageInterval{}).Where("id = ?", iv.ID).Updates(map[string]any{"ended_at": end, "heartbeat_at": end}).Error; err != nil {
				return err
			}
		}
		return nil
	})
}

// StorageToBill returns open storage intervals and closed unsettled ones.
func (s *Store) StorageToBill(ctx context.Context) ([]StorageInterval, error) {
	var out []StorageInterval
	err := s.db.WithContext(ctx).Where("ended_at IS NULL OR settled = 0").Order("id").Find(&out).Error
	return out, err
}

// StorageToBillOf is StorageToBill for one user, through the index
// storage_intervals_unsettled_user: what a page about the caller needs.
func (s *Store) StorageToBillOf(ctx context.Context, userID int64) ([]StorageInterval, error) {
	var out []StorageInterval
	err := storageToBillQuery(s.rdb.WithContext(ctx), userID).Find(&out).Error
	return out, err
}

func storageToBillQuery(db *gorm.DB, userID int64) *gorm.DB {
	return db.Model(&StorageInterval{}).Where("ended_at IS NULL OR settled = 0").Where("user_id = ?", userID).Order("id")
}

// RecordStorageBilling appends storage ledger lines and moves the interval's
// billing mark, in one transaction (idempotent like RecordBilling).
func (s *Store) RecordStorageBilling(ctx context.Context, ivID int64, lines []LedgerEntry, billedThrough time.Time, settled bool) (added int, err error) {
	now := s.now()
	inserted := make([]bool, len(lines))
	defer func() { markAdded(lines, inserted, err) }()
	err = s.db.WithContext(ctx).Transaction(func(tx *gorm.DB) error {
		for i, l := range lines {
			res := tx.Exec(`INSERT INTO ledger_entries (idempotency_key, user_id, group_name, group_id, workbench_id, resource, gpu_model,
				period_start, period_end, seconds, quantity_milli, rate_micros, amount_micros, note, created_at)
				VALUES (?, ?, ?, COALESCE(?, `+groupIDOfName+`), '', ?, '', ?, ?, ?, ?, ?, ?, ?, ?) ON CONFLICT(idempotency_key) DO NOTHING`,
				l.IdempotencyKey, l.UserID, l.GroupName, l.GroupID, l.GroupName, l.Resource, l.PeriodStart.UTC(), l.PeriodEnd.UTC(),
				l.Seconds, l.QuantityMilli, l.RateMicros, l.AmountMicros, l.Note, now)
			if res.Error != nil {
				return res.Error
			}
			added += int(res.RowsAffected)
			inserted[i] = res.RowsAffected > 0
		}
		return tx.Model(&StorageInterval{}).Where("id = ?", ivID).
			Updates(map[string]any{"billed_through": billedThrough.UTC(), "settled": settled}).Error
	})
	return added, err
}
