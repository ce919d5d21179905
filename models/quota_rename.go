package models

import (
	"encoding/json"

	"gorm.io/gorm"
)

// Quotas list allowed images and flavors by name (what the admin typed,
// and what the API shows). A rename in the catalog is carried into every
// list that names the old name, in the rename's transaction: without it,
// renaming "PyTorch (CUDA 12)" would silently take the image away from
// every group whose quota allows it, and saving such a quota again would
// fail on a name that no longer exists.

// Allow-list columns of the quotas table (never user input: they name a
// column).
const (
	quotaAllowedImages  = "allowed_images"
	quotaAllowedFlavors = "allowed_flavors"
)

// renameInAllowedLists replaces oldName by newName in column's lists.
func renameInAllowedLists(tx *gorm.DB, column, oldName, newName string) error {
	if oldName == newName {
		return nil
	}
	var rows []quotaRow
	if err := tx.Where(column + " IS NOT NULL").Find(&rows).Error; err != nil {
		return err
	}
	for _, r := range rows {
		raw := r.AllowedImages
		if column == quotaAllowedFlavors {
			raw = r.AllowedFlavors
		}
		var names []string
		if raw == nil || json.Unmarshal([]byte(*raw), &names) != nil {
			continue
		}
		changed := false
		for i, n := range names {
			if n == oldName {
				names[i], changed = newName, true
			}
		}
		if !changed {
			continue
		}
		b, err := json.Marshal(names)
		if err != nil {
			return err
		}
		if err := tx.Model(&quotaRow{}).Where("id = ?", r.ID).Update(column, string(b)).Error; err != nil {
			return err
		}
	}
	return nil
}
