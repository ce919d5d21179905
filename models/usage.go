package models

import (
	"context"
	"errors"
	"time"

	"gorm.io/gorm"
)

// UsageInterval is a span during which a workbench held resources.
type UsageInterval struct {
	ID          int64 `gorm:"primaryKey"`
	WorkbenchID string
	UserID      int64
	GPUModel    string `gorm:"column:gpu_model"`
	GPUCount    int    `gorm:"column:gpu_count"`
	// UnitKind and UnitProfile say what GPUCount counts (whole GPUs, MIG
	// instances of a profile, slices), so each is priced at its own rate.
	UnitKind    string `gorm:"column:unit_kind"`
	UnitProfile string `gorm:"column:unit_profile"`
	CPUMilli    int64  `gorm:"column:cpu_milli"`
	MemoryMiB   int64  `gorm:"column:memory_mib"`
	// Tier is the GPU price tier of the run ("" or preemptible).
	Tier          string
	StartedAt     time.Time
	HeartbeatAt   time.Time
	EndedAt       *time.Time
	EndReason     string
	BilledThrough *time.Time
	Settled       bool
}

// EndRestartedOutside is the end reason of an interval its container's
// restart behind the portal's back cut (docker restart): the run goes on in
// the next interval, so this part is billed without a minimum charge of
// its own (each part had one, and the two billed spans overlapped).
const EndRestartedOutside = "restarted outside the portal"

// OpenInterval starts metering a workbench. A workbench has at most one open
// interval (a unique index says so); opening again returns the open one.
func (s *Store) OpenInterval(ctx context.Context, iv *UsageInterval) error {
	iv.HeartbeatAt = iv.StartedAt
	err := s.db.WithContext(ctx).Create(iv).Error
	if uniqueViolation(err) {
		return s.db.WithContext(ctx).Where("workbench_id = ? AND ended_at IS NULL", iv.WorkbenchID).First(iv).Error
	}
	return err
}

// OpenIntervalOf returns the open interval of a workbench, or ErrNotFound.
func (s *Store) OpenIntervalOf(ctx context.Context, wbID string) (*UsageInterval, error) {
	var iv UsageInterval
	err := s.db.WithContext(ctx).Where("workbench_id = ? AND ended_at IS NULL", wbID).First(&iv).Error
	return &iv, notFound(err)
}

// HeartbeatIntervals moves the heartbeat of the open intervals of the given
// workbenches (those whose containers were just seen running) to at: after a
// crash, an interval whose container is gone closes at its last heartbeat.
func (s *Store) HeartbeatIntervals(ctx context.Context, workbenchIDs []string, at time.Time) error {
	if len(workbenchIDs) == 0 {
		return nil
	}
	return s.db.WithContext(ctx).Model(&UsageInterval{}).Where("ended_at IS NULL AND workbench_id IN ?", workbenchIDs).
		Update("heartbeat_at", at).Error
}

// CloseInterval ends the open interval of a workbench at endedAt (never
// before it started). No open interval is not an error: closing is
// idempotent.
func (s *Store) CloseInterval(ctx context.Context, wbID string, endedAt time.Time, reason string) error {
	return s.db.WithContext(ctx).Transaction(func(tx *gorm.DB) error {
		return closeOpenInterval(tx, wbID, endedAt, reason)
	})
}

// closeOpenInterval ends the open interval of wbID inside tx, so a state
// change and the end of its metering commit together: no engine event has
// to arrive for a stopped, failed or deleted workbench to stop costing.
func closeOpenInterval(tx *gorm.DB, wbID string, endedAt time.Time, reason string) error {
	var iv UsageInterval
	err := tx.Where("workbench_id = ? AND ended_at IS NULL", wbID).First(&iv).Error
	if errors.Is(err, gorm.ErrRecordNotFound) {
		return nil
	}
	if err != nil {
		return err
	}
	if endedAt.Before(iv.StartedAt) {
		endedAt = iv.StartedAt
	}
	return tx.Model(&iv).Updates(map[string]any{"ended_at": endedAt.UTC(), "end_reason": reason}).Error
}

// IntervalsToBill returns open intervals and closed ones not yet settled.
func (s *Store) IntervalsToBill(ctx context.Context) ([]UsageInterval, error) {
	var out []UsageInterval
	err := s.db.WithContext(ctx).Where("ended_at IS NULL OR settled = 0").Order("id").Find(&out).Error
	return out, err
}

// IntervalsToBillOf is IntervalsToBill limited to one user's intervals
// (userID != 0) or to some workbenches' (workbenchIDs != nil): what a page
// about the caller's own workbenches needs, read through indexes on the
// unsettled intervals instead of every one in the portal.
func (s *Store) IntervalsToBillOf(ctx context.Context, userID int64, workbenchIDs []string) ([]UsageInterval, error) {
	var out []UsageInterval
	if workbenchIDs != nil && len(workbenchIDs) == 0 {
		return out, nil
	}
	err := intervalsToBillQuery(s.rdb.WithContext(ctx), userID, workbenchIDs).Find(&out).Error
	return out, err
}

func intervalsToBillQuery(db *gorm.DB, userID int64, workbenchIDs []string) *gorm.DB {
	q := db.Model(&UsageInterval{}).Where("ended_at IS NULL OR settled = 0")
	if userID != 0 {
		q = q.Where("user_id = ?", userID)
	}
	if workbenchIDs != nil {
		q = q.Where("workbench_id IN ?", workbenchIDs)
	}
	return q.Order("id")
}

// OpenIntervals returns the open intervals, optionally of one user (0 = all).
func (s *Store) OpenIntervals(ctx context.Context, userID int64) ([]UsageInterval, error) {
	q := s.db.WithContext(ctx).Where("ended_at IS NULL")
	if userID != 0 {
		q = q.Where("user_id = ?", userID)
	}
	var out []UsageInterval
	return out, q.Find(&out).Error
}

// IntervalsOf returns every interval of a workbench, oldest first.
func (s *Store) IntervalsOf(ctx context.Context, wbID string) ([]UsageInterval, error) {
	var out []UsageInterval
	err := s.db.WithContext(ctx).Where("workbench_id = ?", wbID).Order("id").Find(&out).Error
	return out, err
}

// SetIntervalTier sets the price tier of a workbench's open interval (tests
// build intervals by hand; the manager sets the tier when it opens one).
func (s *Store) SetIntervalTier(ctx context.Context, wbID, tier string) error {
	return s.db.WithContext(ctx).Model(&UsageInterval{}).Where("workbench_id = ? AND ended_at IS NULL", wbID).Update("tier", tier).Error
}
