package models

import (
	"context"
	"encoding/json"
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
}

// TableName keeps gorm off its pluralised default.
func (AuditEntry) TableName() string { return "audit_log" }

// Audit appends an entry; before and after are marshalled to JSON (nil → "").
func (s *Store) Audit(ctx context.Context, actor, action, target string, before, after any) error {
	e := AuditEntry{At: s.now(), Actor: actor, Action: action, Target: target, Before: jsonText(before), After: jsonText(after)}
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
