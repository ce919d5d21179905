package models

import (
	"context"
	"fmt"
	"time"

	"gorm.io/gorm"
)

// GPUState is what an admin decided about a physical GPU.
type GPUState struct {
	UUID      string `gorm:"primaryKey"`
	Drained   bool
	Note      string
	UpdatedBy string
	UpdatedAt time.Time
	// SharedSlices > 0 shares the GPU in that many slices (one workbench
	// each, no memory isolation); 0 hands it out whole.
	SharedSlices int `gorm:"column:shared_slices"`
	// MPS limits given to each slice's container when set (0 = off); they
	// only take effect where the host runs the MPS control daemon.
	MPSMemoryMiB     int64 `gorm:"column:mps_memory_mib"`
	MPSThreadPercent int   `gorm:"column:mps_thread_percent"`
}

// SetGPUDrained drains (or returns to service) the GPU with uuid. A drained
// GPU is never given to a new workbench.
func (s *Store) SetGPUDrained(ctx context.Context, uuid string, drained bool, by, note string) error {
	return s.db.WithContext(ctx).Exec(`INSERT INTO gpu_states (uuid, drained, note, updated_by, updated_at) VALUES (?, ?, ?, ?, ?)
		ON CONFLICT(uuid) DO UPDATE SET drained = excluded.drained, note = excluded.note, updated_by = excluded.updated_by, updated_at = excluded.updated_at`,
		uuid, drained, note, by, s.now()).Error
}

// Bounds of the shared-GPU settings.
const (
	MaxSharedSlices = 64
	maxMPSMemoryMiB = 1 << 22 // 4 TiB: beyond any GPU
)

// SharedSetting is what an admin sets on a GPU to share it.
type SharedSetting struct {
	Slices           int   `json:"slices"`
	MPSMemoryMiB     int64 `json:"mps_memory_mib"`
	MPSThreadPercent int   `json:"mps_thread_percent"`
}

// Validate checks a shared setting's bounds.
func (c SharedSetting) Validate() error {
	// One slice would be the whole GPU under another name: it would leave
	// the whole-GPU pool to be handed out as a "slice" that shares nothing.
	if c.Slices < 0 || c.Slices == 1 || c.Slices > MaxSharedSlices {
		return invalid("slices", "must be 0 (not shared) or between 2 and %d", MaxSharedSlices)
	}
	if c.MPSMemoryMiB < 0 || c.MPSMemoryMiB > maxMPSMemoryMiB {
		return invalid("mps_memory_mib", "must be between 0 (no cap) and %d", maxMPSMemoryMiB)
	}
	if c.MPSThreadPercent < 0 || c.MPSThreadPercent > 100 {
		return invalid("mps_thread_percent", "must be between 0 (no share set) and 100")
	}
	return nil
}

// SetGPUShared shares a GPU in c.Slices slices (0: whole again), in one
// immediate transaction with the bindings it must respect: a GPU bound whole
// cannot become shared, and a slice still held cannot disappear (fewer
// slices, or unsharing, waits until its workbench stops). It returns the
// setting before the change, for the audit log.
func (s *Store) SetGPUShared(ctx context.Context, uuid string, c SharedSetting, by string) (SharedSetting, error) {
	var before SharedSetting
	if err := c.Validate(); err != nil {
		return before, err
	}
	err := s.db.WithContext(ctx).Transaction(func(tx *gorm.DB) error {
		var cur GPUState
		if err := tx.Where("uuid = ?", uuid).Limit(1).Find(&cur).Error; err != nil {
			return err
		}
		before = SharedSetting{Slices: cur.SharedSlices, MPSMemoryMiB: cur.MPSMemoryMiB, MPSThreadPercent: cur.MPSThreadPercent}
		var held []gpuAllocation
		if err := tx.Where("gpu_uuid = ?", uuid).Find(&held).Error; err != nil {
			return err
		}
		for _, a := range held {
			switch {
			case a.Kind == UnitGPU && c.Slices > 0:
				return &ConflictError{Message: fmt.Sprintf("the GPU is in use whole by workbench %s: share it once that stops", holderName(tx, a.WorkbenchID))}
			case a.Kind == UnitSlice && a.Slice >= c.Slices:
				if a.Slice == 0 { // only unsharing (0) gets here: 1 slice is refused
					return &ConflictError{Message: fmt.Sprintf("slice 0 is held by workbench %s: keep the GPU shared until it stops", holderName(tx, a.WorkbenchID))}
				}
				return &ConflictError{Message: fmt.Sprintf("slice %d is held by workbench %s: keep at least %d slices until it stops", a.Slice, holderName(tx, a.WorkbenchID), a.Slice+1)}
			}
		}
		return tx.Exec(`INSERT INTO gpu_states (uuid, updated_by, updated_at, shared_slices, mps_memory_mib, mps_thread_percent) VALUES (?, ?, ?, ?, ?, ?)
			ON CONFLICT(uuid) DO UPDATE SET shared_slices = excluded.shared_slices, mps_memory_mib = excluded.mps_memory_mib,
			mps_thread_percent = excluded.mps_thread_percent, updated_by = excluded.updated_by, updated_at = excluded.updated_at`,
			uuid, by, s.now(), c.Slices, c.MPSMemoryMiB, c.MPSThreadPercent).Error
	})
	return before, err
}

// holderName names a workbench holding units as an admin finds it on the
// GPU page, "train (alice)"; its id if it cannot be read.
func holderName(tx *gorm.DB, id string) string {
	var row struct{ Name, Username string }
	err := tx.Table("workbenches w").Select("w.name, u.username").Joins("JOIN users u ON u.id = w.owner_id").
		Where("w.id = ?", id).Limit(1).Scan(&row).Error
	if err != nil || row.Name == "" {
		return id
	}
	return row.Name + " (" + row.Username + ")"
}

// ConflictError is a change refused because of the current state; its
// message says what to do (handlers answer 409).
type ConflictError struct{ Message string }

func (e *ConflictError) Error() string { return e.Message }

// GPUStates returns admin state for every GPU that has any, keyed by UUID.
func (s *Store) GPUStates(ctx context.Context) (map[string]GPUState, error) {
	var rows []GPUState
	if err := s.rdb.WithContext(ctx).Find(&rows).Error; err != nil {
		return nil, err
	}
	out := make(map[string]GPUState, len(rows))
	for _, r := range rows {
		out[r.UUID] = r
	}
	return out, nil
}
