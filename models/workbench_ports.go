package models

import (
	"context"
	"slices"
)

// SetWorkbenchPorts replaces the extra HTTP ports the owner declared on a
// workbench (the same rules as an image's: unprivileged, not Jupyter's, at
// most MaxExtraPorts), sorted.
func (s *Store) SetWorkbenchPorts(ctx context.Context, id string, ports []int) ([]int, error) {
	ports = slices.Clone(ports)
	if err := validatePorts(ports); err != nil {
		return nil, err
	}
	if ports == nil {
		ports = []int{}
	}
	slices.Sort(ports)
	res := s.db.WithContext(ctx).Model(&Workbench{ID: id}).Where("deleted_at IS NULL").Select("extra_ports", "updated_at").
		Updates(&Workbench{ExtraPorts: ports, UpdatedAt: s.now()})
	if res.Error != nil {
		return nil, res.Error
	}
	if res.RowsAffected == 0 {
		return nil, ErrNotFound
	}
	return ports, nil
}

// HasExtraPort reports whether the owner declared port on the workbench.
func (w *Workbench) HasExtraPort(port int) bool { return slices.Contains(w.ExtraPorts, port) }
