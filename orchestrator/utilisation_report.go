package orchestrator

import (
	"context"
	"time"

	"workbench/models"
	"workbench/orchestrator/gpu"
)

// Utilisation reads the rollup of [from, to) and builds the utilisation
// and idle-cost report (see utilisation.go). ownerID 0 reports the whole
// cluster; otherwise only the GPU time that user's workbenches held.
func (m *Manager) Utilisation(ctx context.Context, from, to time.Time, bucket string, ownerID int64) (UtilReport, error) {
	threshold := uint32(gpu.DefaultIdleThresholdPercent)
	if m.pool != nil && m.pool.sampler != nil {
		threshold = m.pool.sampler.IdleThreshold()
	}
	return BuildUtilisation(ctx, m.store, m.pool, from, to, bucket, ownerID, threshold)
}

// BuildUtilisation is Manager.Utilisation over a store and a pool (the
// CLI's `workbench gpus --utilisation` has no manager); pool may be nil
// (then rows rolled up before the model column have no model).
// thresholdPercent is the idle threshold of the "held below" figures.
func BuildUtilisation(ctx context.Context, store *models.Store, pool *Pool, from, to time.Time, bucket string, ownerID int64,
	thresholdPercent uint32) (UtilReport, error) {
	wbs, err := store.WorkbenchesEver(ctx, ownerID) // deleted ones too: their past GPU time is still theirs
	if err != nil {
		return UtilReport{}, err
	}
	var rows []models.GPUMinute
	var units []models.GPUUnitMinute
	if ownerID == 0 {
		rows, err = store.GPUMinutes(ctx, from, to)
		if err == nil {
			units, err = store.GPUUnitMinutes(ctx, from, to, nil)
		}
	} else {
		ids := make([]string, 0, len(wbs))
		for _, w := range wbs {
			ids = append(ids, w.ID)
		}
		rows, err = store.GPUMinutesOfWorkbenches(ctx, from, to, ids)
		if err == nil {
			units, err = store.GPUUnitMinutes(ctx, from, to, ids)
		}
	}
	if err != nil {
		return UtilReport{}, err
	}
	holders := map[string]UtilHolder{}
	owners := map[int64]UtilHolder{}
	for _, w := range wbs {
		o, ok := owners[w.OwnerID]
		if !ok {
			if u, err := store.UserByID(ctx, w.OwnerID); err == nil {
				o.User = u.Username
			}
			if o.Groups, err = store.UserGroups(ctx, w.OwnerID); err != nil {
				return UtilReport{}, err
			}
			owners[w.OwnerID] = o
		}
		holders[w.ID] = UtilHolder{Workbench: w.Name, User: o.User, Groups: o.Groups}
	}
	modelOf := map[string]string{}
	if pool != nil {
		if m, err := pool.ModelByUUID(ctx); err == nil {
			modelOf = m
		}
	}
	scheds, err := store.Schedules(ctx)
	if err != nil {
		return UtilReport{}, err
	}
	return ComputeUtilisationUnits(rows, units, from, to, bucket, holders, modelOf, scheds, thresholdPercent), nil
}
