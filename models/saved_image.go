package models

import (
	"context"
	"slices"

	"gorm.io/gorm"
)

// Saved returns whether the image was saved from a workbench by a user
// (not an entry of the admin's catalog).
func (i *Image) Saved() bool { return i.OwnerID != 0 }

// VisibleTo reports whether a user with these groups may see and launch
// the image: catalog images are for everyone (quotas decide the rest), a
// saved image for its owner and the groups it is shared with.
func (i *Image) VisibleTo(userID int64, groups []string) bool {
	if i.OwnerID == 0 || i.OwnerID == userID {
		return true
	}
	for _, g := range groups {
		if slices.Contains(i.SharedGroups, g) {
			return true
		}
	}
	return false
}

// ListImagesFor returns the images a user may launch: the catalog, their
// own saved images and those shared with their groups.
func (s *Store) ListImagesFor(ctx context.Context, userID int64, onlyEnabled bool) ([]Image, error) {
	all, err := s.ListImages(ctx, onlyEnabled)
	if err != nil {
		return nil, err
	}
	groups, err := s.UserGroups(ctx, userID)
	if err != nil {
		return nil, err
	}
	out := all[:0]
	for _, img := range all {
		if img.VisibleTo(userID, groups) {
			out = append(out, img)
		}
	}
	return out, nil
}

// SavedImagesOf returns the images a user saved, newest first.
func (s *Store) SavedImagesOf(ctx context.Context, userID int64) ([]Image, error) {
	var out []Image
	return out, s.db.WithContext(ctx).Where("owner_id = ?", userID).Order("base_name, version DESC").Find(&out).Error
}

// SavedImageBytes is the storage a user's saved images take.
func (s *Store) SavedImageBytes(ctx context.Context, userID int64) (int64, error) {
	var total int64
	err := s.db.WithContext(ctx).Model(&Image{}).Where("owner_id = ?", userID).Select("COALESCE(SUM(size_bytes), 0)").Scan(&total).Error
	return total, err
}

// ImageRefInUse reports whether a catalog entry (saved or not, deleted
// or not) names the engine image ref: a save must never re-tag it.
func (s *Store) ImageRefInUse(ctx context.Context, ref string) (bool, error) {
	var n int64
	err := s.db.WithContext(ctx).Unscoped().Model(&Image{}).Where("image = ?", ref).Count(&n).Error
	return n > 0, err
}

// NextImageVersion is the version a new save of baseName by userID gets.
func (s *Store) NextImageVersion(ctx context.Context, userID int64, baseName string) (int, error) {
	var v int
	err := s.db.WithContext(ctx).Model(&Image{}).Where("owner_id = ? AND base_name = ?", userID, baseName).
		Select("COALESCE(MAX(version), 0)").Scan(&v).Error
	return v + 1, err
}

// DeleteSavedImage removes a saved image's row, refusing (ErrConflict)
// while a workbench still uses it: starting that workbench again needs it.
func (s *Store) DeleteSavedImage(ctx context.Context, id int64) error {
	return s.db.WithContext(ctx).Transaction(func(tx *gorm.DB) error {
		var users int64
		if err := tx.Model(&Workbench{}).Where("image_id = ? AND deleted_at IS NULL", id).Count(&users).Error; err != nil {
			return err
		}
		if users > 0 {
			return ErrConflict
		}
		res := tx.Where("id = ? AND owner_id <> 0", id).Delete(&Image{})
		if res.Error != nil {
			return res.Error
		}
		if res.RowsAffected == 0 {
			return ErrNotFound
		}
		return nil
	})
}

// PromoteImage makes a saved image part of the admin's catalog: visible to
// everyone, no longer counted against its saver's quota.
func (s *Store) PromoteImage(ctx context.Context, id int64) error {
	res := s.db.WithContext(ctx).Model(&Image{}).Where("id = ? AND owner_id <> 0", id).
		Updates(map[string]any{"owner_id": 0, "shared_groups": nil, "updated_at": s.now()})
	if res.Error != nil {
		return res.Error
	}
	if res.RowsAffected == 0 {
		return ErrNotFound
	}
	return nil
}

// ShareImage sets the groups a saved image is shared with.
func (s *Store) ShareImage(ctx context.Context, id int64, groups []string) error {
	img := Image{SharedGroups: groups}
	if img.SharedGroups == nil {
		img.SharedGroups = []string{}
	}
	res := s.db.WithContext(ctx).Model(&Image{ID: id}).Where("owner_id <> 0").Select("shared_groups").Updates(&img)
	if res.Error != nil {
		return res.Error
	}
	if res.RowsAffected == 0 {
		return ErrNotFound
	}
	return nil
}
