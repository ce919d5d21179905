package models

import (
	"context"
	"errors"
	"time"

	"gorm.io/gorm"
)

// ActionViewAsAdmin is the audit action of an administrator opening
// someone else's workbench page (its log's last lines, history and cost):
// a read of a user's data, recorded so the user can learn of it.
const ActionViewAsAdmin = "workbench.view_as_admin"

// ViewAuditEvery bounds how often one actor's read of one target is
// recorded: the administrator's page refetches its live region every 5 s
// (without JavaScript it reloads while the workbench is on its way
// somewhere) and may be open in two tabs, and one
// row per administrator, workbench and 10 minutes says who read it and
// when without filling the log.
const ViewAuditEvery = 10 * time.Minute

// WriteViewAudit appends r, the row of a read (no change), unless r.Actor
// already has a row of r.Action on r.Target written less than
// ViewAuditEvery ago; it says whether it wrote. The look and the insert
// are one immediate transaction, so two requests at once (two tabs, a
// reload racing a click) write one row between them.
func (s *Store) WriteViewAudit(ctx context.Context, r AuditRecord) (written bool, err error) {
	if r.Actor == "" || r.Action == "" || r.Target == "" {
		return false, errors.New("view audit without an actor, action or target")
	}
	// The page's live region refetches it every 5 s: a look already
	// recorded is read, without taking the write lock, and no more.
	if last, err := s.lastAudit(ctx, r.Action, r.Target, r.Actor); err == nil && last != nil && s.now().Sub(last.At) < ViewAuditEvery {
		return false, nil
	}
	err = s.InTx(ctx, func(tx *Store) error {
		last, err := tx.lastAudit(ctx, r.Action, r.Target, r.Actor)
		if err != nil {
			return err
		}
		// A row stamped ahead of the clock (set back since) counts as
		// recent: it was written, and a view is not lost by skipping.
		if last != nil && tx.now().Sub(last.At) < ViewAuditEvery {
			return nil
		}
		written = true
		return tx.WriteAudit(ctx, r)
	})
	return written && err == nil, err
}

// lastAudit is the newest row of action on target, by actor unless actor
// is "". By id, not by time: ids follow the order rows were written in,
// whatever the clock did. It is a range of audit_log_target_action from
// its end, so it costs what the target's rows of that action cost, not
// the log.
func (s *Store) lastAudit(ctx context.Context, action, target, actor string) (*AuditEntry, error) {
	var rows []AuditEntry
	if err := lastAuditQuery(s.db.WithContext(ctx), action, target, actor).Find(&rows).Error; err != nil {
		return nil, err
	}
	if len(rows) == 0 {
		return nil, nil
	}
	return &rows[0], nil
}

// lastAuditQuery is lastAudit's statement (TestHotQueriesUseIndexes).
func lastAuditQuery(tx *gorm.DB, action, target, actor string) *gorm.DB {
	q := tx.Model(&AuditEntry{}).Where("target = ? AND action = ?", target, action)
	if actor != "" {
		q = q.Where("actor = ?", actor)
	}
	return q.Order("id DESC").Limit(1)
}

// AuditsOn is the newest rows of action on target written at since or
// later, at most limit of them, newest first, and how many such rows there
// are in all: the owner's page lists the recent administrators' looks at
// a workbench and says how many earlier ones there were. One statement, a
// range of audit_log_target_action_at from its end for the rows and the
// same range, the index alone, for the count.
func (s *Store) AuditsOn(ctx context.Context, action, target string, since time.Time, limit int) ([]AuditEntry, int64, error) {
	var rows []auditWithTotal
	if err := auditsOnQuery(s.db.WithContext(ctx), action, target, since.UTC(), limit).Scan(&rows).Error; err != nil {
		return nil, 0, err
	}
	if len(rows) == 0 {
		return nil, 0, nil
	}
	out := make([]AuditEntry, len(rows))
	for i, r := range rows {
		out[i] = r.AuditEntry
	}
	return out, rows[0].Total, nil
}

// auditWithTotal is a row of auditsOnQuery: the entry and the count of
// the range it is read from.
type auditWithTotal struct {
	AuditEntry
	Total int64
}

// auditsOnQuery is AuditsOn's statement (TestAuditsOnReadsAnIndexRange).
// By time, newest first, as its reader reads the times; ids break ties.
// The count is a subquery of its own (evaluated once): a window function
// over the rows would number every row in the range before the LIMIT.
func auditsOnQuery(tx *gorm.DB, action, target string, since time.Time, limit int) *gorm.DB {
	count := tx.Session(&gorm.Session{NewDB: true}).Model(&AuditEntry{}).Select("COUNT(*)").
		Where("target = ? AND action = ? AND at >= ?", target, action, since)
	return tx.Model(&AuditEntry{}).Select("audit_log.*, (?) AS total", count).
		Where("target = ? AND action = ? AND at >= ?", target, action, since).
		Order("at DESC, id DESC").Limit(limit)
}
