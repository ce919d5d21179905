package models

import "context"

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
