package orchestrator

import (
	"context"
	"time"

	"workbench/models"
)

// Utilisation reads the rollup of [from, to) and builds the utilisation
// and idle-cost report (see utilisation.go). ownerID 0 reports the whole
// cluster; otherwise only the GPU time that user's workbenches held.
func (m *Manager) Utilisation(ctx context.Context, from, to time.Time, bucket string, ownerID int64) (UtilReport, error) {
	wbs, err := m.store.WorkbenchesEver(ctx, ownerID) // deleted ones too: their past GPU time is still theirs
	if err != nil {
		return UtilReport{}, err
	}
	var rows []models.GPUMinute
	if ownerID == 0 {
		rows, err = m.store.GPUMinutes(ctx, from, to)
	} else {
		ids := make([]string, 0, len(wbs))
		for _, w := range wbs {
			ids = append(ids, w.ID)
		}
		rows, err = m.store.GPUMinutesOfWorkbenches(ctx, from, to, ids)
	}
	if err != nil {
		return UtilReport{}, err
	}
	holders := map[string]UtilHolder{}
	owners := map[int64]UtilHolder{}
	for _, w := range wbs {
		o, ok := owners[w.OwnerID]
		if !ok {
			if u, err := m.store.UserByID(ctx, w.OwnerID); err == nil {
				o.User = u.Username
			}
			if o.Groups, err = m.store.UserGroups(ctx, w.OwnerID); err != nil {
				return UtilReport{}, err
			}
			owners[w.OwnerID] = o
		}
		holders[w.ID] = UtilHolder{Workbench: w.Name, User: o.User, Groups: o.Groups}
	}
	modelOf := map[string]string{}
	if gpus, err := m.pool.List(ctx); err == nil {
		for _, g := range gpus {
			modelOf[g.UUID] = g.Model
		}
	}
	scheds, err := m.store.Schedules(ctx)
	if err != nil {
		return UtilReport{}, err
	}
	return ComputeUtilisation(rows, from, to, bucket, holders, modelOf, scheds), nil
}
