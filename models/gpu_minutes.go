package models

import (
	"context"
	"time"

	"gorm.io/gorm"
	"gorm.io/gorm/clause"
)

// GPUMinute is one GPU's telemetry over one minute (see migration 00031).
type GPUMinute struct {
	GPUUUID       string `gorm:"column:gpu_uuid;primaryKey"`
	Minute        int64  `gorm:"primaryKey"` // unix seconds of the minute's start
	Samples       int64
	UtilSamples   int64
	UtilSum       int64
	UnreadSamples int64
	MemUsedMaxMiB int64 `gorm:"column:mem_used_max_mib"`
	PowerSamples  int64
	PowerSumMW    int64  `gorm:"column:power_sum_mw"`
	WorkbenchID   string `gorm:"column:workbench_id"`
	// EnergyMJ is the energy the GPU drew in the minute (counter deltas,
	// resets handled by the rollup; 0 when neither energy nor power could
	// be read).
	EnergyMJ int64  `gorm:"column:energy_mj"`
	GPUModel string `gorm:"column:gpu_model"`
}

// TableName is gorm's table for GPUMinute.
func (GPUMinute) TableName() string { return "gpu_minutes" }

// UtilMean is the mean utilisation of the readable samples; ok is false
// when none could be read.
func (g GPUMinute) UtilMean() (mean float64, ok bool) {
	if g.UtilSamples == 0 {
		return 0, false
	}
	return float64(g.UtilSum) / float64(g.UtilSamples), true
}

// SaveGPUMinutes writes rollup rows; a row for a (GPU, minute) already
// stored is replaced (the rollup of a minute is recomputed whole). In the
// same transaction each row's energy is booked to its holder's usage
// interval (interval_energy); a replaced row first takes back what it had
// booked, so writing a minute twice never counts its energy twice.
func (s *Store) SaveGPUMinutes(ctx context.Context, rows []GPUMinute) error {
	if len(rows) == 0 {
		return nil
	}
	return s.db.WithContext(ctx).Transaction(func(tx *gorm.DB) error {
		b := energyBooker{tx: tx, intervals: map[string][]UsageInterval{}, groups: map[int64]string{}}
		for _, r := range rows {
			var old GPUMinute
			err := tx.Where("gpu_uuid = ? AND minute = ?", r.GPUUUID, r.Minute).Limit(1).Find(&old).Error
			if err != nil {
				return err
			}
			if old.Samples > 0 {
				if err := b.book(old.WorkbenchID, old.GPUModel, old.Minute, -old.EnergyMJ); err != nil {
					return err
				}
			}
			if err := b.book(r.WorkbenchID, r.GPUModel, r.Minute, r.EnergyMJ); err != nil {
				return err
			}
		}
		return tx.Clauses(clause.OnConflict{UpdateAll: true}).Create(&rows).Error
	})
}

// GPUMinutes returns the rows of [from, to), by GPU then minute.
func (s *Store) GPUMinutes(ctx context.Context, from, to time.Time) ([]GPUMinute, error) {
	var out []GPUMinute
	err := s.db.WithContext(ctx).Where("minute >= ? AND minute < ?", from.Unix(), to.Unix()).
		Order("gpu_uuid, minute").Find(&out).Error
	return out, err
}

// PruneGPUMinutes deletes rows of minutes before cutoff.
func (s *Store) PruneGPUMinutes(ctx context.Context, cutoff time.Time) (int64, error) {
	res := s.db.WithContext(ctx).Where("minute < ?", cutoff.Unix()).Delete(&GPUMinute{})
	return res.RowsAffected, res.Error
}

// GPUMinutesOfWorkbenches returns the rows of [from, to) that the given
// workbenches held.
func (s *Store) GPUMinutesOfWorkbenches(ctx context.Context, from, to time.Time, ids []string) ([]GPUMinute, error) {
	var out []GPUMinute
	if len(ids) == 0 {
		return out, nil
	}
	err := s.db.WithContext(ctx).Where("minute >= ? AND minute < ? AND workbench_id IN ?", from.Unix(), to.Unix(), ids).
		Order("gpu_uuid, minute").Find(&out).Error
	return out, err
}

// WorkbenchesEver lists every workbench record of ownerID (0: everyone's),
// deleted ones included, with only id, name and owner: reports over past
// GPU time must still name whose it was.
func (s *Store) WorkbenchesEver(ctx context.Context, ownerID int64) ([]Workbench, error) {
	q := s.db.WithContext(ctx).Model(&Workbench{}).Select("id, name, owner_id")
	if ownerID != 0 {
		q = q.Where("owner_id = ?", ownerID)
	}
	var out []Workbench
	return out, q.Find(&out).Error
}
