package models

import "context"

// GroupMemberIDs lists the ids of groupID's members.
func (s *Store) GroupMemberIDs(ctx context.Context, groupID int64) ([]int64, error) {
	var ids []int64
	err := s.db.WithContext(ctx).Table("group_members").Where("group_id = ?", groupID).Order("user_id").Pluck("user_id", &ids).Error
	return ids, err
}

// GroupMembersRunning lists the running workbenches of groupID's members,
// with their owners' usernames: a group's leads see who holds GPUs, and
// since when they have been idle, without being admins.
func (s *Store) GroupMembersRunning(ctx context.Context, groupID int64) ([]Workbench, error) {
	var out []Workbench
	q := listWorkbenchesQuery(s.rdb.WithContext(ctx), 0, []string{StateRunning}).
		Where("workbenches.owner_id IN (SELECT user_id FROM group_members WHERE group_id = ?)", groupID)
	if err := q.Find(&out).Error; err != nil {
		return nil, err
	}
	return out, s.attachGPUs(ctx, out)
}
