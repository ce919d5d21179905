package models

import (
	"context"
	"time"

	"gorm.io/gorm"
)

// Image check states.
const (
	CheckRunning = "running"
	CheckPassed  = "passed"
	CheckFailed  = "failed"
)

// ImageCheck is one "Test image" run: a dry launch of a catalog image
// without GPUs. Step is the check under way, or the one that failed;
// Message says the outcome in one plain sentence, Details holds raw errors
// and output.
type ImageCheck struct {
	ID         int64      `gorm:"primaryKey" json:"id"`
	ImageID    int64      `json:"image_id"`
	State      string     `json:"state"`
	Step       string     `json:"step"`
	Message    string     `json:"message"`
	Details    string     `json:"details"`
	StartedBy  string     `json:"started_by"`
	StartedAt  time.Time  `json:"started_at"`
	FinishedAt *time.Time `json:"finished_at"`
}

// TableName is image_tests (migration 00012).
func (ImageCheck) TableName() string { return "image_tests" }

// CreateImageCheck records a check that is starting.
func (s *Store) CreateImageCheck(ctx context.Context, imageID int64, by string) (*ImageCheck, error) {
	c := &ImageCheck{ImageID: imageID, State: CheckRunning, StartedBy: by, StartedAt: s.now()}
	return c, s.db.WithContext(ctx).Create(c).Error
}

// SetImageCheckStep records the check a run has got to.
func (s *Store) SetImageCheckStep(ctx context.Context, id int64, step string) error {
	return s.db.WithContext(ctx).Model(&ImageCheck{}).Where("id = ?", id).Update("step", step).Error
}

// FinishImageCheck records a run's outcome.
func (s *Store) FinishImageCheck(ctx context.Context, id int64, state, step, message, details string) error {
	now := s.now()
	return s.db.WithContext(ctx).Model(&ImageCheck{}).Where("id = ?", id).Updates(map[string]any{
		"state": state, "step": step, "message": message, "details": details, "finished_at": now}).Error
}

// ImageCheckByID returns one check of an image.
func (s *Store) ImageCheckByID(ctx context.Context, imageID, id int64) (*ImageCheck, error) {
	var c ImageCheck
	return &c, notFound(s.db.WithContext(ctx).Where("image_id = ?", imageID).First(&c, id).Error)
}

// LatestImageChecks returns the newest check of each image, by image id.
func (s *Store) LatestImageChecks(ctx context.Context) (map[int64]ImageCheck, error) {
	var list []ImageCheck
	err := s.db.WithContext(ctx).Where("id IN (SELECT MAX(id) FROM image_tests GROUP BY image_id)").Find(&list).Error
	out := map[int64]ImageCheck{}
	for _, c := range list {
		out[c.ImageID] = c
	}
	return out, err
}

// FailInterruptedImageChecks closes checks a previous process left
// running — their work died with it — and returns their ids (what they
// left on the engine is named by them).
func (s *Store) FailInterruptedImageChecks(ctx context.Context, before time.Time) ([]int64, error) {
	now := s.now()
	var ids []int64
	err := s.db.WithContext(ctx).Transaction(func(tx *gorm.DB) error {
		q := tx.Model(&ImageCheck{}).Where("state = ? AND started_at < ?", CheckRunning, before)
		if err := q.Pluck("id", &ids).Error; err != nil || len(ids) == 0 {
			return err
		}
		return tx.Model(&ImageCheck{}).Where("id IN ?", ids).
			Updates(map[string]any{"state": CheckFailed, "message": "The portal restarted during this test; run it again.", "finished_at": now}).Error
	})
	return ids, err
}
