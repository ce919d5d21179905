package models

import (
	"context"
	"slices"
	"time"

	"gorm.io/gorm"
	"gorm.io/gorm/clause"
)

// OrphanUnit is a unit (whole GPU, MIG instance or slice) held by a
// container of this install that no workbench record names: a restored
// backup does not know the workbenches launched after it was taken, and
// their containers still run on their GPUs until the orphan sweep removes
// them. Until then the unit is taken (readBindings): a launch given it
// would share the GPU with the container.
type OrphanUnit struct {
	UnitID      string    `gorm:"column:unit_id;primaryKey" json:"-"`
	Kind        string    `json:"kind"`
	GPUUUID     string    `gorm:"column:gpu_uuid" json:"gpu_uuid"`
	ContainerID string    `json:"-"`
	Container   string    `json:"name"`      // the container's name
	RemoveAt    time.Time `json:"remove_at"` // when the orphan sweep removes it
}

// TableName is the orphan_units table.
func (OrphanUnit) TableName() string { return "orphan_units" }

// OrphanHold is what one orphan container holds, as reconciliation reads
// it from the container's labels: its units (a slice without its number,
// which the container's labels do not say: one free slice of its GPU is
// taken for it).
type OrphanHold struct {
	ContainerID string
	Container   string
	RemoveAt    time.Time
	Units       []Unit
}

// SetOrphanUnits makes holds the units held by orphan containers: the
// units of containers no longer listed (removed by the sweep or by hand)
// are free again, a container already recorded keeps the units it was
// given (its slice numbers do not move between passes), and a new one's
// units are taken — a unit a workbench holds too is recorded all the
// same (it stays taken when that workbench stops), and a slice is the
// first one of its GPU nobody holds (none free: the GPU is full already).
// freed counts the units freed.
func (s *Store) SetOrphanUnits(ctx context.Context, holds []OrphanHold) (freed int, err error) {
	if len(holds) == 0 {
		// The common case, every reconciliation: no orphan, none recorded.
		// Read first, so that it takes no write lock.
		var n int64
		if err := s.db.WithContext(ctx).Model(&OrphanUnit{}).Count(&n).Error; err != nil || n == 0 {
			return 0, err
		}
	}
	err = s.InTx(ctx, func(tx *Store) error {
		freed = 0
		db := tx.db.WithContext(ctx) // a session: each statement starts afresh
		var have []OrphanUnit
		if err := db.Find(&have).Error; err != nil {
			return err
		}
		listed := make(map[string]OrphanHold, len(holds))
		for _, h := range holds {
			listed[h.ContainerID] = h
		}
		recorded := map[string]bool{}
		for _, u := range have {
			h, ok := listed[u.ContainerID]
			if !ok {
				if err := db.Delete(&OrphanUnit{}, "unit_id = ?", u.UnitID).Error; err != nil {
					return err
				}
				freed++
				continue
			}
			recorded[u.ContainerID] = true
			if !h.RemoveAt.Equal(u.RemoveAt) {
				if err := db.Model(&OrphanUnit{}).Where("unit_id = ?", u.UnitID).Update("remove_at", h.RemoveAt.UTC()).Error; err != nil {
					return err
				}
			}
		}
		for _, h := range holds {
			if recorded[h.ContainerID] || len(h.Units) == 0 {
				continue
			}
			if err := holdOrphanUnits(db, h); err != nil {
				return err
			}
		}
		return nil
	})
	return freed, err
}

// holdOrphanUnits records a newly seen orphan's units.
func holdOrphanUnits(db *gorm.DB, h OrphanHold) error {
	b, err := readBindings(db)
	if err != nil {
		return err
	}
	for _, u := range h.Units {
		row := OrphanUnit{UnitID: u.UUID, Kind: u.Kind, GPUUUID: u.GPUUUID, ContainerID: h.ContainerID, Container: h.Container, RemoveAt: h.RemoveAt.UTC()}
		if u.Kind == UnitSlice {
			row.UnitID = ""
			for k := 0; k < b.slices[u.GPUUUID]; k++ {
				if id := SliceUnitID(u.GPUUUID, k); !b.taken[id] {
					row.UnitID = id
					b.taken[id] = true
					break
				}
			}
			if row.UnitID == "" {
				continue
			}
		}
		// Two orphans naming one unit: the first keeps it (it is taken
		// either way).
		if err := db.Clauses(clause.OnConflict{DoNothing: true}).Create(&row).Error; err != nil {
			return err
		}
	}
	return nil
}

// OrphanUnits lists the units held by orphan containers, by unit.
//
// Cached until orphan_units is written (table_versions.go): every page
// with free counts reads it, and only reconciliation writes it, rarely
// changing a row. Each call gets its own copy. Allocation does not read
// it (readBindings reads the table in its transaction).
func (s *Store) OrphanUnits(ctx context.Context) ([]OrphanUnit, error) {
	rows, err := s.orphans.get(s.versions, []string{"orphan_units"}, func() ([]OrphanUnit, error) {
		var rows []OrphanUnit
		return rows, s.db.WithContext(ctx).Order("unit_id").Find(&rows).Error
	})
	return slices.Clone(rows), err
}

// OrphanUnits lists the units held by orphan containers as the drain's
// transaction sees them: the queue's estimates count each as released when
// the sweep removes its container.
func (q *QueueTx) OrphanUnits() ([]OrphanUnit, error) {
	var rows []OrphanUnit
	err := q.tx.Order("unit_id").Find(&rows).Error
	return rows, err
}
