package models

import (
	"context"
	"strings"
	"time"

	"gorm.io/gorm"
)

// GPUWatch is a user's "notify me when a GPU of this model frees", or,
// with FlavorID, "notify me when this flavor can start" (enough units of
// its kind free for it). It fires once: NotifiedAt is set with the
// notification it wrote.
type GPUWatch struct {
	ID       int64  `gorm:"primaryKey" json:"id"`
	UserID   int64  `json:"-"`
	GPUModel string `gorm:"column:gpu_model" json:"gpu_model"` // a flavor watch: the flavor's model
	// FlavorID is the flavor watched; nil for a watch on the GPU model.
	FlavorID   *int64     `gorm:"column:flavor_id" json:"flavor_id,omitempty"`
	CreatedAt  time.Time  `json:"created_at"`
	NotifiedAt *time.Time `json:"notified_at"`
}

// TableName is the table's name.
func (GPUWatch) TableName() string { return "gpu_watches" }

// maxPendingWatches bounds one user's open watches.
const maxPendingWatches = 20

// CreateGPUWatch subscribes userID to the next free GPU of model; known
// lists the pool's models (a watch on a model the server lacks would never fire).
func (s *Store) CreateGPUWatch(ctx context.Context, userID int64, model string, known []string) (*GPUWatch, error) {
	model = strings.TrimSpace(model)
	ok := false
	for _, m := range known {
		ok = ok || m == model
	}
	if !ok {
		return nil, invalid("gpu_model", "choose a GPU model this server has: %s", strings.Join(known, ", "))
	}
	var w *GPUWatch
	err := s.db.WithContext(ctx).Transaction(func(tx *gorm.DB) error {
		var n int64
		if err := tx.Model(&GPUWatch{}).Where("user_id = ? AND notified_at IS NULL", userID).Count(&n).Error; err != nil {
			return err
		}
		if n >= maxPendingWatches {
			return invalid("gpu_model", "you have %d open watches; delete some first", n)
		}
		var same int64
		if err := tx.Model(&GPUWatch{}).Where("user_id = ? AND gpu_model = ? AND flavor_id IS NULL AND notified_at IS NULL", userID, model).Count(&same).Error; err != nil {
			return err
		}
		if same > 0 {
			return taken("gpu_model", "you are already watching %s", model)
		}
		w = &GPUWatch{UserID: userID, GPUModel: model, CreatedAt: s.now()}
		return tx.Create(w).Error
	})
	return w, err
}

// CreateFlavorWatch subscribes userID to the moment flavor fl can start
// (enough units of its kind free for it). Only an enabled flavor with GPUs
// can be watched: a CPU flavor never waits for the pool.
func (s *Store) CreateFlavorWatch(ctx context.Context, userID int64, fl *Flavor) (*GPUWatch, error) {
	if fl == nil || !fl.Enabled || fl.GPUCount == 0 {
		return nil, invalid("flavor", "choose an enabled flavor with GPUs")
	}
	var w *GPUWatch
	err := s.db.WithContext(ctx).Transaction(func(tx *gorm.DB) error {
		var n int64
		if err := tx.Model(&GPUWatch{}).Where("user_id = ? AND notified_at IS NULL", userID).Count(&n).Error; err != nil {
			return err
		}
		if n >= maxPendingWatches {
			return invalid("flavor", "you have %d open watches; delete some first", n)
		}
		var same int64
		if err := tx.Model(&GPUWatch{}).Where("user_id = ? AND flavor_id = ? AND notified_at IS NULL", userID, fl.ID).Count(&same).Error; err != nil {
			return err
		}
		if same > 0 {
			return taken("flavor", "you are already watching flavor %s", fl.Name)
		}
		id := fl.ID
		w = &GPUWatch{UserID: userID, GPUModel: fl.GPUModel, FlavorID: &id, CreatedAt: s.now()}
		return tx.Create(w).Error
	})
	return w, err
}

// ListGPUWatches returns a user's watches, newest first.
func (s *Store) ListGPUWatches(ctx context.Context, userID int64) ([]GPUWatch, error) {
	var out []GPUWatch
	err := s.db.WithContext(ctx).Where("user_id = ?", userID).Order("id DESC").Find(&out).Error
	return out, err
}

// DeleteGPUWatch removes a watch of userID.
func (s *Store) DeleteGPUWatch(ctx context.Context, userID, id int64) error {
	res := s.db.WithContext(ctx).Where("id = ? AND user_id = ?", id, userID).Delete(&GPUWatch{})
	if res.Error != nil {
		return res.Error
	}
	if res.RowsAffected == 0 {
		return ErrNotFound
	}
	return nil
}

// PendingGPUWatches returns every watch not yet fired, oldest first, of
// accounts that are not disabled (a disabled user is neither notified nor
// mailed; their watches wait, should the account come back).
func (s *Store) PendingGPUWatches(ctx context.Context) ([]GPUWatch, error) {
	var out []GPUWatch
	err := s.db.WithContext(ctx).Where("notified_at IS NULL AND user_id IN (SELECT id FROM users WHERE NOT disabled)").Order("id").Find(&out).Error
	return out, err
}

// FireGPUWatch marks watch id fired and writes its notification, in one
// transaction; it reports false when the watch was already fired (or
// deleted), so two checkers racing notify once.
func (s *Store) FireGPUWatch(ctx context.Context, id int64, message, link string) (bool, error) {
	fired := false
	err := s.db.WithContext(ctx).Transaction(func(tx *gorm.DB) error {
		now := s.now()
		var w GPUWatch
		if err := tx.Where("id = ? AND notified_at IS NULL", id).Take(&w).Error; err != nil {
			if err == gorm.ErrRecordNotFound {
				return nil
			}
			return err
		}
		res := tx.Model(&GPUWatch{}).Where("id = ? AND notified_at IS NULL", id).Update("notified_at", now)
		if res.Error != nil || res.RowsAffected == 0 {
			return res.Error
		}
		fired = true
		return tx.Create(&Notification{UserID: w.UserID, Message: message, Link: link, CreatedAt: now}).Error
	})
	return fired, err
}
