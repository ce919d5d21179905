package models

import (
	"context"
	"time"
)

// GPUState is what an admin decided about a physical GPU.
type GPUState struct {
	UUID      string `gorm:"primaryKey"`
	Drained   bool
	Note      string
	UpdatedBy string
	UpdatedAt time.Time
}

// SetGPUDrained drains (or returns to service) the GPU with uuid. A drained
// GPU is never given to a new workbench.
func (s *Store) SetGPUDrained(ctx context.Context, uuid string, drained bool, by, note string) error {
	return s.db.WithContext(ctx).Exec(`INSERT INTO gpu_states (uuid, drained, note, updated_by, updated_at) VALUES (?, ?, ?, ?, ?)
		ON CONFLICT(uuid) DO UPDATE SET drained = excluded.drained, note = excluded.note, updated_by = excluded.updated_by, updated_at = excluded.updated_at`,
		uuid, drained, note, by, s.now()).Error
}

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
