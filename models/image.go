package models

import (
	"context"
	"encoding/json"
	"errors"
	"regexp"
	"slices"
	"strings"
	"time"

	"gorm.io/gorm"
)

// Image is a catalog entry: the only images users can launch (an arbitrary
// image reference would let a user run anything as the portal's engine).
type Image struct {
	ID           int64  `gorm:"primaryKey" json:"id"`
	Name         string `json:"name"`
	Image        string `gorm:"column:image" json:"image"`
	Description  string `json:"description"`
	Tags         string `json:"tags"` // comma-separated, e.g. "CUDA 12.4,PyTorch 2.5"
	StartCommand string `json:"start_command"`
	RunAsUser    string `json:"run_as_user"`
	HomePath     string `json:"home_path"`
	OpenPath     string `json:"open_path"` // where Open goes below /wb/{id}, e.g. /lab (JupyterHub's default_url)
	// ExtraPorts are more HTTP ports its apps serve (image_ports.go).
	ExtraPorts []int `gorm:"serializer:json" json:"extra_ports"`
	Enabled    bool  `json:"enabled"`
	// Saved images (saved_image.go): OwnerID 0 is the admin's catalog;
	// otherwise the image was saved from workbench SavedFrom by its owner,
	// visible to them and to SharedGroups, version Version of BaseName,
	// SizeBytes counted against their saved-image quota.
	OwnerID      int64     `json:"owner_id"`
	BaseName     string    `json:"base_name,omitempty"`
	Version      int       `json:"version,omitempty"`
	SizeBytes    int64     `json:"size_bytes"`
	SavedFrom    string    `json:"saved_from,omitempty"`
	SharedGroups []string  `gorm:"serializer:json" json:"shared_groups"`
	CreatedAt    time.Time `json:"created_at"`
	UpdatedAt    time.Time `json:"updated_at"`
}

// TagList returns the tags as a slice.
func (i *Image) TagList() []string {
	var out []string
	for _, t := range strings.Split(i.Tags, ",") {
		if t = strings.TrimSpace(t); t != "" {
			out = append(out, t)
		}
	}
	return out
}

var (
	// Names people give catalog entries and groups take letters and digits
	// of any script: a Chinese lab names its flavor 教学版 and its group
	// 视觉组 (and its directory sends that group name at single sign-on).
	// cleanName puts them in NFKC with single spaces first, so two names
	// that look alike are the same bytes.
	catalogNameRe = regexp.MustCompile(`^[\p{L}\p{N}][\p{L}\p{N}\p{M} ._()+-]{0,63}$`)
	runAsRe       = regexp.MustCompile(`^[0-9]{1,10}(:[0-9]{1,10})?$|^[a-z_][a-z0-9_-]{0,31}$`)
)

// Validate checks every field and normalises whitespace. It reports the first
// problem with the field it belongs to.
func (i *Image) Validate() error {
	i.Name = cleanName(i.Name)
	i.Image = strings.TrimSpace(i.Image)
	i.Description = strings.TrimSpace(i.Description)
	i.StartCommand = strings.TrimSpace(i.StartCommand)
	i.RunAsUser = strings.TrimSpace(i.RunAsUser)
	i.HomePath = strings.TrimSpace(i.HomePath)
	i.Tags = strings.Join(i.TagList(), ",")
	// Every field is checked, so the form shows all that is wrong at once.
	var errs collectInvalid
	if !catalogNameRe.MatchString(i.Name) {
		errs.add(invalid("name", "use 1–64 letters, digits, spaces and . _ ( ) + -"))
	} else if allDigits(i.Name) {
		errs.add(invalid("name", "a name of digits alone reads as an id in the API: add a letter"))
	}
	errs.add(ValidateImageRef(i.Image))
	if len(i.Description) > 2000 {
		errs.add(invalid("description", "is too long"))
	}
	errs.add(ValidateStartCommand(i.StartCommand))
	if i.RunAsUser == "" {
		i.RunAsUser = "1000"
	}
	switch {
	case !runAsRe.MatchString(i.RunAsUser):
		errs.add(invalid("run_as_user", "use a uid, uid:gid or user name"))
	case i.RunAsUser == "0" || i.RunAsUser == "root" || strings.HasPrefix(i.RunAsUser, "0:"):
		errs.add(invalid("run_as_user", "workbenches never run as root"))
	case strings.HasSuffix(i.RunAsUser, ":0"):
		errs.add(invalid("run_as_user", "group 0 is root's group; give the user's own gid, e.g. 1000:1000, or a bare uid"))
	}
	errs.add(i.validateOpenPath())
	errs.add(i.validateExtraPorts())
	if i.HomePath == "" {
		i.HomePath = "/home/jovyan"
	}
	errs.add(validHomePath(i.HomePath))
	return errs.err()
}

// CreateImage validates and adds a catalog image.
func (s *Store) CreateImage(ctx context.Context, img *Image) error {
	if err := img.Validate(); err != nil {
		return err
	}
	img.ID = 0
	if err := s.db.WithContext(ctx).Create(img).Error; err != nil {
		if uniqueViolation(err) {
			return taken("name", "an image with this name exists")
		}
		return err
	}
	return nil
}

// UpdateImage validates and replaces a catalog image's fields.
func (s *Store) UpdateImage(ctx context.Context, img *Image) error {
	if err := img.Validate(); err != nil {
		return err
	}
	return s.db.WithContext(ctx).Transaction(func(tx *gorm.DB) error {
		var before Image
		if err := tx.Select("name").Where("id = ?", img.ID).First(&before).Error; err != nil {
			if errors.Is(err, gorm.ErrRecordNotFound) {
				return ErrNotFound
			}
			return err
		}
		res := tx.Model(&Image{}).Where("id = ?", img.ID).Select(
			"name", "image", "description", "tags", "start_command", "run_as_user", "home_path", "open_path", "extra_ports", "enabled", "updated_at").
			Updates(map[string]any{"name": img.Name, "image": img.Image, "description": img.Description, "tags": img.Tags,
				"start_command": img.StartCommand, "run_as_user": img.RunAsUser, "home_path": img.HomePath,
				"open_path": img.OpenPath, "extra_ports": extraPortsColumn(img.ExtraPorts), "enabled": img.Enabled, "updated_at": s.now()})
		if res.Error != nil {
			if uniqueViolation(res.Error) {
				return taken("name", "an image with this name exists")
			}
			return res.Error
		}
		if err := renameInAllowedLists(tx, quotaAllowedImages, before.Name, img.Name); err != nil {
			return err
		}
		// The caller's img gets what is stored (created_at, updated_at):
		// the API answers with it.
		return tx.First(img, img.ID).Error
	})
}

// extraPortsColumn is the stored form of ExtraPorts (its JSON serializer's)
// for a map update, which gorm writes without the field's serializer.
func extraPortsColumn(ports []int) string {
	b, _ := json.Marshal(ports)
	return string(b)
}

// ListImages returns the catalog; onlyEnabled hides disabled entries.
//
// The catalog is read on every page that names an image and written by an
// admin now and then: the whole list is cached until images is written, and
// each call gets its own copy of the slice.
func (s *Store) ListImages(ctx context.Context, onlyEnabled bool) ([]Image, error) {
	all, err := s.images.get(s.versions, []string{"images"}, func() ([]Image, error) {
		var out []Image
		return out, s.db.WithContext(ctx).Order("name").Find(&out).Error
	})
	if err != nil {
		return nil, err
	}
	out := make([]Image, 0, len(all))
	for _, img := range all {
		if !onlyEnabled || img.Enabled {
			img.ExtraPorts = slices.Clone(img.ExtraPorts)
			out = append(out, img)
		}
	}
	return out, nil
}

// ImageByID returns one catalog image.
func (s *Store) ImageByID(ctx context.Context, id int64) (*Image, error) {
	var img Image
	return &img, notFound(s.db.WithContext(ctx).First(&img, id).Error)
}

// ImageByNameOrID resolves what an API client names an image: its id or name.
func (s *Store) ImageByNameOrID(ctx context.Context, key string) (*Image, error) {
	var img Image
	return &img, s.byNameOrID(ctx, &img, key)
}
