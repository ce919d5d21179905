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
// with their owners' names and GPUs; of members of groupID only unless 0.
func (s *Store) WorkbenchesAfter(ctx context.Context, ownerID, groupID int64, after WorkbenchKey, limit int) ([]Workbench, error) {
	var out []Workbench
	if err := workbenchesAfterQuery(s.rdb.WithContext(ctx), ownerID, groupID, after, limit).Find(&out).Error; err != nil {
		return nil, err
	}
	return out, s.attachGPUs(ctx, out)
}

// workbenchesAfterQuery reads a range of workbenches_owner_created (one
// owner) or workbenches_created (everyone's), both (…, created_at, id).
func workbenchesAfterQuery(db *gorm.DB, ownerID, groupID int64, after WorkbenchKey, limit int) *gorm.DB {
	q := inGroup(listWorkbenchesQuery(db, ownerID, nil), groupID)
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

// StatementLine is a ledger line as the API's statement gives it: with its
// user's name, its workbench's (the id where the workbench is unknown, as
// the CSV names it; a deleted one's kept) and, for a line reversed since,
// the id of the reversal.
type StatementLine struct {
	LedgerEntry
	Username      string
	WorkbenchName string
	ReversedBy    *int64
}

// StatementLinesAfter is one page of a month's ledger lines by id: at most
// limit lines whose period starts in month (UTC) and whose id is above
// afterID (0: from the first), of userID (0: everyone's). By id, not by
// period as the /usage page and the CSV: the ledger only grows and ids
// only rise, so a line written during a walk (the hour just billed, a
// reversal dated back into the month) comes on its last page, never behind
// its cursor.
func (s *Store) StatementLinesAfter(ctx context.Context, userID int64, month time.Time, afterID int64, limit int) ([]StatementLine, error) {
	var out []StatementLine
	return out, statementLinesAfterQuery(s.rdb.WithContext(ctx), userID, month, afterID, limit).Scan(&out).Error
}

// statementLinesAfterQuery reads a range of ledger_user_month (one user)
// or ledger_month (everyone's), both (…, month, id). The month is the
// expression those indexes and the ledger_monthly rollup file a line by,
// so the lines of a month add up to UsageSummary's total for it.
func statementLinesAfterQuery(db *gorm.DB, userID int64, month time.Time, afterID int64, limit int) *gorm.DB {
	// A line is reversed at most once: the reversal's idempotency key
	// "reverse:<id>" is unique (Reverse, ReverseLines), so its index finds it.
	q := db.Table("ledger_entries AS l").
		Select(`l.*, u.username, COALESCE(w.name, l.workbench_id) AS workbench_name,
			(SELECT r.id FROM ledger_entries r WHERE r.idempotency_key = 'reverse:' || l.id) AS reversed_by, `+LineTierSQL+` AS tier`).
		Joins("JOIN users u ON u.id = l.user_id").
		Joins(LineTierJoin).
		Joins("LEFT JOIN workbenches w ON w.id = l.workbench_id").
		Where("substr(l.period_start, 1, 7) = ?", month.UTC().Format("2006-01"))
	if userID != 0 {
		q = q.Where("l.user_id = ?", userID)
	}
	if afterID > 0 {
		q = q.Where("l.id > ?", afterID)
	}
	return q.Order("l.id").Limit(limit)
}
