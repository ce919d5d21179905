package models

import (
	"context"
	"time"

	"gorm.io/gorm"
)

// The API's lists that grow with the lab (GET /api/v1/admin/users,
// /workbenches, /notifications) come a page at a time by keyset: each page
// starts after the last row of the one before, in a total order an index
// serves. Unlike OFFSET, a page costs the same at any depth, and a row
// added or removed meanwhile shifts no other row across a page boundary,
// so a walk through the pages returns each row that stayed exactly once.

// UsersAfter is one page of the accounts by id: at most limit users whose
// id is above afterID (0: from the first). By id, not username, so an
// account made during a walk comes on its last page instead of behind it.
func (s *Store) UsersAfter(ctx context.Context, afterID int64, limit int) ([]User, error) {
	var out []User
	return out, usersAfterQuery(s.rdb.WithContext(ctx), afterID, limit).Find(&out).Error
}

func usersAfterQuery(db *gorm.DB, afterID int64, limit int) *gorm.DB {
	return db.Model(&User{}).Where("id > ?", afterID).Order("id").Limit(limit)
}

// WorkbenchKey is where a workbench stands in ListWorkbenches' order
// (newest first, ties by id): the API's next page starts after it.
type WorkbenchKey struct {
	CreatedAt time.Time
	ID        string
}

// Key is wb's place in ListWorkbenches' order.
func (wb *Workbench) Key() WorkbenchKey { return WorkbenchKey{CreatedAt: wb.CreatedAt, ID: wb.ID} }

// WorkbenchesAfter is one page of ListWorkbenches(ownerID): at most limit
// workbenches (not deleted) after key (the zero key: from the newest),
// with their owners' names and GPUs.
func (s *Store) WorkbenchesAfter(ctx context.Context, ownerID int64, after WorkbenchKey, limit int) ([]Workbench, error) {
	var out []Workbench
	if err := workbenchesAfterQuery(s.rdb.WithContext(ctx), ownerID, after, limit).Find(&out).Error; err != nil {
		return nil, err
	}
	return out, s.attachGPUs(ctx, out)
}

// workbenchesAfterQuery reads a range of workbenches_owner_created (one
// owner) or workbenches_created (everyone's), both (…, created_at, id).
func workbenchesAfterQuery(db *gorm.DB, ownerID int64, after WorkbenchKey, limit int) *gorm.DB {
	q := listWorkbenchesQuery(db, ownerID, nil)
	if after.ID != "" {
		q = q.Where("(workbenches.created_at, workbenches.id) < (?, ?)", after.CreatedAt.UTC(), after.ID)
	}
	return q.Limit(limit)
}

// NotificationsBefore is one page of a user's notifications, newest first:
// at most limit older than beforeID (0: from the newest).
func (s *Store) NotificationsBefore(ctx context.Context, userID, beforeID int64, limit int) ([]Notification, error) {
	var out []Notification
	return out, notificationsBeforeQuery(s.rdb.WithContext(ctx), userID, beforeID, limit).Find(&out).Error
}

func notificationsBeforeQuery(db *gorm.DB, userID, beforeID int64, limit int) *gorm.DB {
	q := db.Model(&Notification{}).Where("user_id = ?", userID)
	if beforeID > 0 {
		q = q.Where("id < ?", beforeID)
	}
	return q.Order("id DESC").Limit(limit)
}
