package models

import (
	"context"
	"time"

	"gorm.io/gorm"
)

// A delete is written down before it starts (RequestWorkbenchDelete) and
// crossed off when it is done, so that one cut short — the portal killed
// between killing the container and marking the record — is finished by
// the next reconciliation (PendingDeletes) rather than lost: the owner
// asked for it, and the request that carried it may be gone.

// PendingDelete is a delete asked for and not finished: the workbench not
// yet marked deleted, or marked but its home volume (DeleteData) not yet
// removed.
type PendingDelete struct {
	ID         string
	OwnerID    int64
	DeleteData bool
	// Deleted: the record is marked; only the home volume is left.
	Deleted bool
}

// RequestWorkbenchDelete records that the owner asked to delete workbench
// id (and its home volume when deleteData).
func (s *Store) RequestWorkbenchDelete(ctx context.Context, id string, deleteData bool) error {
	res := s.db.WithContext(ctx).Model(&Workbench{}).Where("id = ? AND deleted_at IS NULL", id).
		Updates(map[string]any{"delete_requested_at": s.now(), "delete_data": deleteData})
	if res.Error != nil {
		return res.Error
	}
	if res.RowsAffected == 0 {
		return ErrNotFound
	}
	return nil
}

// PendingDeletes lists the deletes asked for and not finished, oldest first.
func (s *Store) PendingDeletes(ctx context.Context) ([]PendingDelete, error) {
	var rows []struct {
		ID         string
		OwnerID    int64
		DeleteData bool
		DeletedAt  *time.Time
	}
	err := pendingDeletesQuery(s.db.WithContext(ctx)).Find(&rows).Error
	if err != nil {
		return nil, err
	}
	out := make([]PendingDelete, len(rows))
	for i, r := range rows {
		out[i] = PendingDelete{ID: r.ID, OwnerID: r.OwnerID, DeleteData: r.DeleteData, Deleted: r.DeletedAt != nil}
	}
	return out, nil
}

// pendingDeletesQuery reads the partial index of unfinished deletes: every
// reconciliation asks, and almost always finds none.
func pendingDeletesQuery(tx *gorm.DB) *gorm.DB {
	return tx.Model(&Workbench{}).Select("id", "owner_id", "delete_data", "deleted_at").
		Where("delete_requested_at IS NOT NULL").Order("delete_requested_at")
}

// WorkbenchDeleteDone crosses off a finished delete (the home volume, when
// asked for, is gone too, or it is kept on purpose).
func (s *Store) WorkbenchDeleteDone(ctx context.Context, id string) error {
	return s.db.WithContext(ctx).Model(&Workbench{}).Where("id = ?", id).
		Updates(map[string]any{"delete_requested_at": nil, "delete_data": false}).Error
}
