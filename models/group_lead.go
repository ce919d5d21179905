package models

import (
	"context"
)

// SetGroupLead makes a member of a group one of its leads, or not. A lead
// reads the group's statement (what its members' lines cost, month by
// month) without being an admin; only a member can be one.
func (s *Store) SetGroupLead(ctx context.Context, groupID, userID int64, lead bool) error {
	res := s.db.WithContext(ctx).Exec("UPDATE group_members SET lead = ? WHERE group_id = ? AND user_id = ?", lead, groupID, userID)
	if res.Error != nil {
		return res.Error
	}
	if res.RowsAffected == 0 {
		return invalid("username", "is not a member of this group: add them first")
	}
	return nil
}

// IsGroupLead reports whether a user leads a group.
func (s *Store) IsGroupLead(ctx context.Context, groupID, userID int64) (bool, error) {
	var n int64
	err := s.rdb.WithContext(ctx).Raw("SELECT COUNT(*) FROM group_members WHERE group_id = ? AND user_id = ? AND lead", groupID, userID).Scan(&n).Error
	return n > 0, err
}

// GroupsLedBy lists the groups a user leads, by name (without members).
func (s *Store) GroupsLedBy(ctx context.Context, userID int64) ([]Group, error) {
	var gs []Group
	err := s.rdb.WithContext(ctx).Table("groups").Select("groups.id, groups.name, groups.description, groups.created_at").
		Joins("JOIN group_members gm ON gm.group_id = groups.id").
		Where("gm.user_id = ? AND gm.lead", userID).Order("groups.name").Scan(&gs).Error
	return gs, err
}
