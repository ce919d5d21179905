package models

import (
	"context"
	"regexp"
	"strings"
	"time"

	"gorm.io/gorm"
)

// PriorityClass is an admin-defined class of work: rank orders the queue
// (higher first); a preemptible class runs at the preemptible price tier
// and yields its GPUs to higher ranks.
type PriorityClass struct {
	Name        string    `gorm:"primaryKey" json:"name"`
	Rank        int       `json:"rank"`
	Preemptible bool      `json:"preemptible"`
	Description string    `json:"description"`
	IsDefault   bool      `json:"is_default"`
	UpdatedAt   time.Time `json:"updated_at"`
}

var classNameRe = regexp.MustCompile(`^[a-z][a-z0-9_-]{0,31}$`)

// PriorityClasses lists the classes, highest rank first.
func (s *Store) PriorityClasses(ctx context.Context) ([]PriorityClass, error) {
	var out []PriorityClass
	err := s.db.WithContext(ctx).Order("rank DESC, name").Find(&out).Error
	return out, err
}

// PriorityClassFor resolves a class by name; "" is the default class.
func (s *Store) PriorityClassFor(ctx context.Context, name string) (*PriorityClass, error) {
	var c PriorityClass
	q := s.db.WithContext(ctx)
	name = strings.TrimSpace(name)
	var err error
	if name == "" {
		err = q.Where("is_default").Order("rank DESC").First(&c).Error
	} else {
		err = q.Where("name = ?", name).First(&c).Error
	}
	if err != nil {
		if notFound(err) == ErrNotFound {
			return nil, invalid("priority", "no priority class %q", name)
		}
		return nil, err
	}
	return &c, nil
}

// SavePriorityClass adds or changes a class; making it the default
// unmarks the previous default in the same transaction.
func (s *Store) SavePriorityClass(ctx context.Context, c *PriorityClass) error {
	c.Name = strings.TrimSpace(c.Name)
	if !classNameRe.MatchString(c.Name) {
		return invalid("name", "use 1–32 lower-case letters, digits, '_' or '-', starting with a letter")
	}
	if c.Rank < 0 || c.Rank > 1000 {
		return invalid("rank", "must be between 0 and 1000")
	}
	if c.IsDefault && c.Preemptible {
		return invalid("is_default", "the default class cannot be preemptible: nobody's work may be preempted without asking")
	}
	c.UpdatedAt = s.now()
	return s.db.WithContext(ctx).Transaction(func(tx *gorm.DB) error {
		if !c.IsDefault {
			// Launches that name no class take the default: saving the
			// default as not default left none, and every launch was
			// refused ("no priority class \"\"").
			var was int64
			if err := tx.Model(&PriorityClass{}).Where("name = ? AND is_default", c.Name).Count(&was).Error; err != nil {
				return err
			}
			if was > 0 {
				return invalid("is_default", "%s is the default class, taken by every launch that names none: make another class the default first", c.Name)
			}
		}
		if c.IsDefault {
			// Only the class that was the default changes (its updated_at
			// with it); the others were stamped as saved too.
			if err := tx.Model(&PriorityClass{}).Where("name <> ? AND is_default", c.Name).Update("is_default", false).Error; err != nil {
				return err
			}
		}
		return tx.Save(c).Error
	})
}
