package handlers

import (
	"context"

	"workbench/models"
	"workbench/templates"
)

// userStorage is a user's home storage as last measured (every metering
// pass) and their effective limits.
type userStorage struct {
	usedMilli int64
	measured  bool // the user has a measured home volume
	limits    models.Limits
}

func (s userStorage) over() bool { return models.StorageOver(s.limits, s.usedMilli) }

// storageOfUsers reads the home storage and effective limits of a page of
// users for the admin lists (the users page, GET /api/v1/admin/users) in a
// fixed number of statements (models.StorageUsedOf, EffectiveQuotasOf),
// never one lookup per row.
func (h *Handler) storageOfUsers(ctx context.Context, users []models.User) (map[int64]userStorage, error) {
	ids := make([]int64, 0, len(users))
	for _, u := range users {
		ids = append(ids, u.ID)
	}
	used, err := h.store.StorageUsedOf(ctx, ids)
	if err != nil {
		return nil, err
	}
	lims, err := h.store.EffectiveQuotasOf(ctx, ids)
	if err != nil {
		return nil, err
	}
	out := make(map[int64]userStorage, len(ids))
	for _, id := range ids {
		milli, measured := used[id]
		out[id] = userStorage{usedMilli: milli, measured: measured, limits: lims[id]}
	}
	return out, nil
}

// view is the users page's storage cell.
func (s userStorage) view() templates.UserStorage {
	if !s.measured {
		return templates.UserStorage{}
	}
	v := templates.UserStorage{Measured: true, UsedGiB: models.GiBText(s.usedMilli), Over: s.over()}
	if s.limits.MaxStorageGiB != nil {
		v.Limited, v.LimitGiB = true, *s.limits.MaxStorageGiB
	}
	return v
}

// api is the storage of an admin API user.
func (s userStorage) api() *APIUserStorage {
	return &APIUserStorage{UsedMilliGiB: s.usedMilli, LimitGiB: s.limits.MaxStorageGiB, Over: s.over()}
}

// apiUsersWithStorage is apiUser of each of users with their storage.
func (h *Handler) apiUsersWithStorage(ctx context.Context, users []models.User) ([]APIUser, error) {
	st, err := h.storageOfUsers(ctx, users)
	if err != nil {
		return nil, err
	}
	out := make([]APIUser, 0, len(users))
	for i := range users {
		a := apiUser(&users[i])
		a.Storage = st[users[i].ID].api()
		out = append(out, a)
	}
	return out, nil
}
