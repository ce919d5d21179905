package models

import (
	"context"
	"encoding/json"
	"strings"
	"time"

	"gorm.io/gorm"
)

// AuditEntry records one admin action: who did what to what, with the state
// before and after as JSON.
type AuditEntry struct {
	ID     int64     `gorm:"primaryKey" json:"id"`
	At     time.Time `json:"at"`
	Actor  string    `json:"actor"`
	Action string    `json:"action"`
	Target string    `json:"target"`
	Before string    `json:"before"`
	After  string    `json:"after"`
	// Via names the API token the action came with, or who ran the
	// command line ("command line as root, sudo by alice"); empty for a
	// browser session and the portal's own work (WithAuditVia).
	Via string `json:"via,omitempty"`
}

// TableName keeps gorm off its pluralised default.
func (AuditEntry) TableName() string { return "audit_log" }

// Audit appends an entry; before and after are marshalled to JSON (nil → "").
func (s *Store) Audit(ctx context.Context, actor, action, target string, before, after any) error {
	e := AuditEntry{At: s.now(), Actor: actor, Action: action, Target: target, Before: jsonText(before), After: jsonText(after), Via: auditVia(ctx)}
	return s.db.WithContext(ctx).Create(&e).Error
}

// ListAudit returns the newest entries first, by when they happened
// (auditOrder).
func (s *Store) ListAudit(ctx context.Context, limit int) ([]AuditEntry, error) {
	var out []AuditEntry
	err := s.db.WithContext(ctx).Order(auditOrder).Limit(limit).Find(&out).Error
	return out, err
}

func jsonText(v any) string {
	if v == nil {
		return ""
	}
	b, err := json.Marshal(v)
	if err != nil {
		return "(unencodable)"
	}
	return string(b)
}

// AuditPage is one page of the audit log, newest first (auditOrder), optionally only
// entries whose action starts with action and whose actor is actor, and how
// many match in all.
func (s *Store) AuditPage(ctx context.Context, action, actor string, offset, limit int) ([]AuditEntry, int64, error) {
	q := auditFiltered(s.db.WithContext(ctx), action, actor)
	var total int64
	if err := q.Count(&total).Error; err != nil {
		return nil, 0, err
	}
	var out []AuditEntry
	err := auditPageQuery(q, offset, limit).Find(&out).Error
	return out, total, err
}

// auditOrder is the audit log's order for its readers, newest first: by
// when the action happened, then by id for rows of the same time. Not by
// id alone: a row kept in memory while the database could not be written
// (AuditHappened) is written later with its own, earlier time, and got an
// id after the rows written meanwhile, so a sign-in during a full disk
// showed above the changes made after the disk was fixed. audit_log_at
// (at, and the rowid, the id, after it) reads the log in this order;
// audit_log_actor_at one actor's rows (TestAuditPageReadsInTimeOrder).
const auditOrder = "at DESC, id DESC"

// auditFiltered is the audit log's rows whose action starts with action
// and whose actor is actor ("": any).
func auditFiltered(tx *gorm.DB, action, actor string) *gorm.DB {
	q := tx.Model(&AuditEntry{})
	if action = strings.TrimSpace(action); action != "" {
		q = q.Where(`action LIKE ? ESCAPE '\'`, likeEscape(action)+"%")
	}
	if actor = strings.TrimSpace(actor); actor != "" {
		q = q.Where("actor = ?", actor)
	}
	return q
}

// auditPageQuery orders q (AuditPage's filters) and takes one page of it.
func auditPageQuery(q *gorm.DB, offset, limit int) *gorm.DB {
	return q.Order(auditOrder).Offset(offset).Limit(limit)
}
