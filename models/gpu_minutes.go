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
	// EnergySamples counts the sample gaps of the minute whose energy was
	// measured (both counter readings); 0 means "not measured", not 0 J.
	EnergySamples int64 `gorm:"column:energy_samples"`
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
	return s.SaveGPURollup(ctx, rows, nil)
}

// SaveGPURollup writes whole-GPU rows and per-unit rows (MIG instances,
// slice holders) in one transaction, booking each row's energy to its
// holder's usage interval as SaveGPUMinutes does; a unit's energy is a
// share of its GPU's (booked as share_mj too).
func (s *Store) SaveGPURollup(ctx context.Context, rows []GPUMinute, units []GPUUnitMinute) error {
	if len(rows) == 0 && len(units) == 0 {
		return nil
	}
	return s.db.WithContext(ctx).Transaction(func(tx *gorm.DB) error {
		b := energyBooker{tx: tx, intervals: map[string][]UsageInterval{}, groups: map[int64]GroupTimeline{}}
		for _, r := range rows {
			var old GPUMinute
			err := tx.Where("gpu_uuid = ? AND minute = ?", r.GPUUUID, r.Minute).Limit(1).Find(&old).Error
			if err != nil {
				return err
			}
			if old.Samples > 0 {
				if err := b.book(old.WorkbenchID, old.GPUModel, old.Minute, -old.EnergyMJ, 0, -measuredMinute(old.EnergySamples)); err != nil {
					return err
				}
			}
			if err := b.book(r.WorkbenchID, r.GPUModel, r.Minute, r.EnergyMJ, 0, measuredMinute(r.EnergySamples)); err != nil {
				return err
			}
		}
		for _, r := range units {
			var old GPUUnitMinute
			err := tx.Where("unit_uuid = ? AND workbench_id = ? AND minute = ?", r.UnitUUID, r.WorkbenchID, r.Minute).Limit(1).Find(&old).Error
			if err != nil {
				return err
			}
			if old.Samples > 0 {
				if err := b.book(old.WorkbenchID, old.GPUModel, old.Minute, -old.EnergyMJ, -old.EnergyMJ, -measuredMinute(old.EnergySamples)); err != nil {
					return err
				}
			}
			if err := b.book(r.WorkbenchID, r.GPUModel, r.Minute, r.EnergyMJ, r.EnergyMJ, measuredMinute(r.EnergySamples)); err != nil {
				return err
			}
		}
		if len(rows) > 0 {
			if err := tx.Clauses(clause.OnConflict{UpdateAll: true}).Create(&rows).Error; err != nil {
				return err
			}
		}
		if len(units) > 0 {
			return tx.Clauses(clause.OnConflict{UpdateAll: true}).Create(&units).Error
		}
		return nil
	})
}

// measuredMinute is 1 for a minute with measured energy.
func measuredMinute(energySamples int64) int64 {
	if energySamples > 0 {
		return 1
	}
	return 0
}

// GPUUnitMinute is one unit's telemetry over one minute (migration 00110):
// a MIG instance's own readings, or a shared slice holder's processes'.
type GPUUnitMinute struct {
	UnitUUID      string `gorm:"column:unit_uuid;primaryKey"`
	WorkbenchID   string `gorm:"column:workbench_id;primaryKey"`
	Minute        int64  `gorm:"primaryKey"`
	GPUUUID       string `gorm:"column:gpu_uuid"`
	Kind          string // UnitMIG or UnitSlice
	Profile       string
	GPUModel      string `gorm:"column:gpu_model"`
	Samples       int64
	UtilSamples   int64
	UtilSum       int64
	UnreadSamples int64
	MemSamples    int64
	MemUsedMaxMiB int64 `gorm:"column:mem_used_max_mib"`
	// EnergyMJ is the unit's share of its GPU's measured energy in the
	// minute; EnergySamples counts the sample gaps it was worked out for
	// (0: not measured). EnergyBasis says how the share was made.
	EnergyMJ      int64  `gorm:"column:energy_mj"`
	EnergySamples int64  `gorm:"column:energy_samples"`
	EnergyBasis   string `gorm:"column:energy_basis"`
	// Units is how many units of its GPU the row stands for (a MIG
	// instance: 1; a slice holder: the slices it held), GPUUnits how many
	// the GPU had (MIG instances made; slices). GPUUnits 0: not recorded
	// (rows before migration 00130).
	Units    int64 `gorm:"column:units"`
	GPUUnits int64 `gorm:"column:gpu_units"`
}

// TableName is gorm's table for GPUUnitMinute.
func (GPUUnitMinute) TableName() string { return "gpu_unit_minutes" }

// UtilMean is the mean utilisation of the readable samples; ok is false
// when none could be read.
func (g GPUUnitMinute) UtilMean() (mean float64, ok bool) {
	if g.UtilSamples == 0 {
		return 0, false
	}
	return float64(g.UtilSum) / float64(g.UtilSamples), true
}

// GPUUnitMinutes returns the unit rows of [from, to); ids, when not nil,
// keeps only the rows those workbenches held.
func (s *Store) GPUUnitMinutes(ctx context.Context, from, to time.Time, ids []string) ([]GPUUnitMinute, error) {
	var out []GPUUnitMinute
	q := s.db.WithContext(ctx).Where("minute >= ? AND minute < ?", from.Unix(), to.Unix())
	if ids != nil {
		if len(ids) == 0 {
			return out, nil
		}
		q = q.Where("workbench_id IN ?", ids)
	}
	err := q.Order("unit_uuid, workbench_id, minute").Find(&out).Error
	return out, err
}

// GPUMinutesOfGPUs returns the whole-GPU rows of [from, to) of the given GPUs.
func (s *Store) GPUMinutesOfGPUs(ctx context.Context, from, to time.Time, uuids []string) ([]GPUMinute, error) {
	var out []GPUMinute
	if len(uuids) == 0 {
		return out, nil
	}
	err := s.db.WithContext(ctx).Where("minute >= ? AND minute < ? AND gpu_uuid IN ?", from.Unix(), to.Unix(), uuids).
		Order("gpu_uuid, minute").Find(&out).Error
	return out, err
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
	if res.Error != nil {
		return res.RowsAffected, res.Error
	}
	units := s.db.WithContext(ctx).Where("minute < ?", cutoff.Unix()).Delete(&GPUUnitMinute{})
	return res.RowsAffected + units.RowsAffected, units.Error
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
