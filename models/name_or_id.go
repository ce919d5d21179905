package models

import (
	"context"
	"errors"
	"strconv"

	"gorm.io/gorm"
)

// byNameOrID loads into row (an image or a flavor) what an API client
// names by its name or its id. The name is looked up first: a flavor named
// "4" (made before Validate refused names of digits alone) is that flavor,
// not the one whose id is 4 — the single query both ways took whichever
// had the lower id, and a script launched a dearer shape than it named.
func (s *Store) byNameOrID(ctx context.Context, row any, key string) error {
	err := s.db.WithContext(ctx).Where("name = ?", cleanName(key)).First(row).Error
	if !errors.Is(err, gorm.ErrRecordNotFound) {
		return err
	}
	id, perr := strconv.ParseInt(key, 10, 64)
	if perr != nil || strconv.FormatInt(id, 10) != key {
		return ErrNotFound
	}
	return notFound(s.db.WithContext(ctx).First(row, id).Error)
}
