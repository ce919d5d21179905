package models

import (
	"context"
	"time"
)

// Notification is one in-app message to a user.
type Notification struct {
	ID        int64      `gorm:"primaryKey" json:"id"`
	UserID    int64      `json:"-"`
	Message   string     `json:"message"`
	Link      string     `json:"link"`
	CreatedAt time.Time  `json:"created_at"`
	ReadAt    *time.Time `json:"read_at"`
}

// AddNotification writes an in-app notification to userID: what happened
// to their own workbench while they may not have been looking (a queued
// launch started, a preemption notice, a stop by the portal). The top bar
// counts it until they open /notifications.
func (s *Store) AddNotification(ctx context.Context, userID int64, message, link string) error {
	return s.db.WithContext(ctx).Create(&Notification{UserID: userID, Message: message, Link: link, CreatedAt: s.now()}).Error
}

// ListNotifications returns a user's newest notifications.
func (s *Store) ListNotifications(ctx context.Context, userID int64, limit int) ([]Notification, error) {
	var out []Notification
	err := s.db.WithContext(ctx).Where("user_id = ?", userID).Order("id DESC").Limit(limit).Find(&out).Error
	return out, err
}

// UnreadNotifications counts a user's notifications not yet seen (the top
// bar shows it on every page).
func (s *Store) UnreadNotifications(ctx context.Context, userID int64) (int64, error) {
	var n int64
	err := s.rdb.WithContext(ctx).Model(&Notification{}).Where("user_id = ? AND read_at IS NULL", userID).Count(&n).Error
	return n, err
}

// MarkNotificationsRead marks all of a user's notifications read.
func (s *Store) MarkNotificationsRead(ctx context.Context, userID int64) error {
	return s.db.WithContext(ctx).Model(&Notification{}).Where("user_id = ? AND read_at IS NULL", userID).Update("read_at", s.now()).Error
}
