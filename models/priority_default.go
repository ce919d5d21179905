package models

import (
	"context"
	"errors"
	"strings"
	"time"

	"gorm.io/gorm"
)

// Scopes of a default priority class.
const (
	PriorityScopeGroup  = "group"
	PriorityScopeFlavor = "flavor"
)

// PriorityDefault is the class a launch takes, without one named, for a
// flavor or for the members of a group (docs/scheduling.md).
type PriorityDefault struct {
	Scope     string    `gorm:"primaryKey" json:"scope"`
	RefID     int64     `gorm:"primaryKey;column:ref_id" json:"id"`
	Class     string    `json:"class"`
	UpdatedAt time.Time `json:"updated_at"`
}

// PriorityDefaults lists the defaults set on groups and flavors.
func (s *Store) PriorityDefaults(ctx context.Context) ([]PriorityDefault, error) {
	var out []PriorityDefault
	err := s.db.WithContext(ctx).Order("scope, ref_id").Find(&out).Error
	return out, err
}

// SetPriorityDefault sets (class "" clears) the default class of a group
// or flavor; the class and the group or flavor must exist. It returns the
// default as saved, stamped with the time of the change (also when cleared,
// so an API client reads when it happened).
func (s *Store) SetPriorityDefault(ctx context.Context, scope string, refID int64, class string) (PriorityDefault, error) {
	saved := PriorityDefault{Scope: scope, RefID: refID, Class: strings.TrimSpace(class), UpdatedAt: s.now()}
	class = saved.Class
	var target any
	switch scope {
	case PriorityScopeGroup:
		target = &Group{}
	case PriorityScopeFlavor:
		target = &Flavor{}
	default:
		return PriorityDefault{}, invalid("scope", "must be group or flavor")
	}
	err := s.db.WithContext(ctx).Transaction(func(tx *gorm.DB) error {
		if err := tx.First(target, refID).Error; err != nil {
			if errors.Is(err, gorm.ErrRecordNotFound) {
				return invalid("id", "no %s %d", scope, refID)
			}
			return err
		}
		if class == "" {
			return tx.Where("scope = ? AND ref_id = ?", scope, refID).Delete(&PriorityDefault{}).Error
		}
		var n int64
		if err := tx.Model(&PriorityClass{}).Where("name = ?", class).Count(&n).Error; err != nil {
			return err
		}
		if n == 0 {
			return invalid("class", "no priority class %q", class)
		}
		return tx.Save(&saved).Error
	})
	if err != nil {
		return PriorityDefault{}, err
	}
	return saved, nil
}

// LaunchDefaultClass is the class a launch of flavorID by userID takes
// when it names none: the flavor's default, else the highest ranked
// default among the user's groups, else the global default.
func (s *Store) LaunchDefaultClass(ctx context.Context, userID, flavorID int64) (*PriorityClass, error) {
	var c PriorityClass
	err := s.db.WithContext(ctx).Raw(`SELECT pc.* FROM priority_defaults d JOIN priority_classes pc ON pc.name = d.class
		WHERE d.scope = ? AND d.ref_id = ?`, PriorityScopeFlavor, flavorID).Scan(&c).Error
	if err != nil {
		return nil, err
	}
	if c.Name != "" {
		return &c, nil
	}
	err = s.db.WithContext(ctx).Raw(`SELECT pc.* FROM priority_defaults d JOIN priority_classes pc ON pc.name = d.class
		JOIN group_members gm ON gm.group_id = d.ref_id
		WHERE d.scope = ? AND gm.user_id = ? ORDER BY pc.rank DESC, pc.name LIMIT 1`, PriorityScopeGroup, userID).Scan(&c).Error
	if err != nil {
		return nil, err
	}
	if c.Name != "" {
		return &c, nil
	}
	return s.PriorityClassFor(ctx, "")
}
