package models

import (
	"context"
	"time"
)

// ReplayRun is one metered run, as the ledger priced it, with when it was
// asked for: the demand of "replay the last 30 days under another policy"
// (issue 12 §5; orchestrator/simulate).
type ReplayRun struct {
	WorkbenchID string     `gorm:"column:workbench_id"`
	Username    string     `gorm:"column:username"`
	GPUModel    string     `gorm:"column:gpu_model"`
	GPUCount    int        `gorm:"column:gpu_count"`
	UnitKind    string     `gorm:"column:unit_kind"`
	UnitProfile string     `gorm:"column:unit_profile"`
	Tier        string     `gorm:"column:tier"`
	Priority    string     `gorm:"column:priority"`
	StartedAt   time.Time  `gorm:"column:started_at"`
	EndedAt     *time.Time `gorm:"column:ended_at"`
	// AskedAt is when the run was asked for: the workbench's last
	// "queued" or "requested" event at or before the run's start (its
	// launch, its wait in the queue, a resume); nil when none is kept.
	AskedAt *time.Time `gorm:"-"`
}

// ReplayRuns lists the GPU runs (usage intervals with units: the ledger's
// source) that started in [from, to), by start.
func (s *Store) ReplayRuns(ctx context.Context, from, to time.Time) ([]ReplayRun, error) {
	db := s.db.WithContext(ctx)
	var out []ReplayRun
	err := db.Raw(`SELECT i.workbench_id, u.username, i.gpu_model, i.gpu_count, i.unit_kind, i.unit_profile, i.tier,
		COALESCE(w.priority, '') AS priority, i.started_at, i.ended_at
		FROM usage_intervals i JOIN users u ON u.id = i.user_id LEFT JOIN workbenches w ON w.id = i.workbench_id
		WHERE i.gpu_count > 0 AND i.started_at >= ? AND i.started_at < ? ORDER BY i.started_at, i.id`,
		from.UTC(), to.UTC()).Scan(&out).Error
	if err != nil || len(out) == 0 {
		return out, err
	}
	ids := make([]string, 0, len(out))
	for _, r := range out {
		ids = append(ids, r.WorkbenchID)
	}
	var evs []workbenchEvent
	// In chunks: SQLite bounds the variables of one statement.
	for i := 0; i < len(ids); i += 500 {
		var part []workbenchEvent
		if err := db.Where("workbench_id IN ? AND state IN ?", ids[i:min(i+500, len(ids))], []string{StateQueued, StateRequested}).
			Order("at").Find(&part).Error; err != nil {
			return nil, err
		}
		evs = append(evs, part...)
	}
	asked := map[string][]time.Time{}
	for _, e := range evs {
		asked[e.WorkbenchID] = append(asked[e.WorkbenchID], e.At)
	}
	for i := range out {
		for _, at := range asked[out[i].WorkbenchID] {
			if !at.After(out[i].StartedAt) {
				t := at
				out[i].AskedAt = &t
			}
		}
	}
	return out, nil
}
