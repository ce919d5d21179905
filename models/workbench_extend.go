package models

import "context"

// ExtendWorkbenchRuntime sets a running workbench's runtime extension from
// one value to another. It changes nothing (and reports false) when the
// workbench is no longer running or another bump got there first, so two
// clicks at once add one hour, not two.
func (s *Store) ExtendWorkbenchRuntime(ctx context.Context, id string, from, to int64) (bool, error) {
	res := s.db.WithContext(ctx).Model(&Workbench{}).
		Where("id = ? AND deleted_at IS NULL AND state = ? AND runtime_extension_s = ?", id, StateRunning, from).
		Updates(map[string]any{"runtime_extension_s": to, "updated_at": s.now()})
	return res.RowsAffected == 1, res.Error
}
