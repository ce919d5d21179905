package models

import (
	"context"
	"encoding/json"
	"strings"
	"time"
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

// ListAudit returns the newest entries first.
func (s *Store) ListAudit(ctx context.Context, limit int) ([]AuditEntry, error) {
	var out []AuditEntry
	err := s.db.WithContext(ctx).Order("id DESC").Limit(limit).Find(&out).Error
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

// AuditPage is one page of the audit log, newest first, optionally only
// entries whose action starts with action and whose actor is actor, and how
// many match in all.
func (s *Store) AuditPage(ctx context.Context, action, actor string, offset, limit int) ([]AuditEntry, int64, error) {
	q := s.db.WithContext(ctx).Model(&AuditEntry{})
	if action = strings.TrimSpace(action); action != "" {
		q = q.Where(`action LIKE ? ESCAPE '\'`, likeEscape(action)+"%")
	}
	if actor = strings.TrimSpace(actor); actor != "" {
		q = q.Where("actor = ?", actor)
	}
	var total int64
	if err := q.Count(&total).Error; err != nil {
		return nil, 0, err
	}
	var out []AuditEntry
	err := q.Order("id DESC").Offset(offset).Limit(limit).Find(&out).Error
	return out, total, err
}
