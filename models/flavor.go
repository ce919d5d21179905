package models

import (
	"context"
	"errors"
	"regexp"
	"strings"
	"time"

	"gorm.io/gorm"
)

// Flavor is a hardware shape a workbench is launched with.
type Flavor struct {
	ID       int64  `gorm:"primaryKey" json:"id"`
	Name     string `json:"name"`
	GPUModel string `gorm:"column:gpu_model" json:"gpu_model"`
	GPUCount int    `gorm:"column:gpu_count" json:"gpu_count"`
	// UnitKind is what GPUCount counts: whole GPUs of GPUModel (UnitGPU),
	// MIG instances of MIGProfile on GPUs of GPUModel (UnitMIG), or one
	// slice of a shared GPU of GPUModel (UnitSlice).
	UnitKind   string     `gorm:"column:unit_kind" json:"unit_kind"`
	MIGProfile string     `gorm:"column:mig_profile" json:"mig_profile,omitempty"`
	CPUMilli   Millicores `gorm:"column:cpu_milli" json:"cpu_cores"`
	// MemoryMiB is the memory limit in MiB (JSON also gives memory_gib, see MarshalJSON).
	MemoryMiB int64 `gorm:"column:memory_mib" json:"memory_mib"`
	ShmMiB    int   `gorm:"column:shm_mib" json:"shm_mib"`
	// MaxRuntimeS stops a workbench of this flavor after that many seconds of
	// running; 0 = no limit.
	MaxRuntimeS int64 `gorm:"column:max_runtime_s" json:"max_runtime_seconds"`
	// GPUIdleTimeoutS stops a running workbench whose GPUs all stayed
	// below the idle utilisation threshold for that many seconds; 0 = off.
	GPUIdleTimeoutS int64 `gorm:"column:gpu_idle_timeout_s" json:"gpu_idle_timeout_seconds"`
	// CPUTwinID is the CPU-only flavor a stopped workbench of this (GPU)
	// flavor may be started as, for setup and data work without holding a
	// GPU; 0 = none. Set by an admin (see cpu_twin.go).
	CPUTwinID int64     `gorm:"column:cpu_twin_id" json:"cpu_twin_id"`
	Enabled   bool      `json:"enabled"`
	CreatedAt time.Time `json:"created_at"`
	UpdatedAt time.Time `json:"updated_at"`
}

// Limits a single flavor may ask for; beyond them a value is surely a typo.
const (
	maxFlavorGPUs   = 16
	MaxFlavorCPUs   = 512 // also the admin form's bound where the host's cores are unknown (FlavorCPUBound)
	maxFlavorMemGiB = 4096
)

// FlavorCPUBound is the most CPU cores a flavor may ask for on a host of
// hostCPUs cores (0: unknown): the host's cores, at most MaxFlavorCPUs.
// The admin form's input takes it as its max and the server refuses past
// it (FlavorCPURangeError), so both say the same bound.
func FlavorCPUBound(hostCPUs int) int {
	if hostCPUs <= 0 {
		return MaxFlavorCPUs
	}
	return min(hostCPUs, MaxFlavorCPUs)
}

// FlavorCPURangeError refuses cpu outside 0.1 and FlavorCPUBound(hostCPUs)
// cores; nil when it is within.
func FlavorCPURangeError(cpu Millicores, hostCPUs int) error {
	bound := FlavorCPUBound(hostCPUs)
	if cpu < 100 || cpu > Millicores(bound)*1000 {
		return invalid("cpu_cores", "must be between 0.1 and %d", bound)
	}
	return nil
}

// Validate checks a flavor's fields.
func (f *Flavor) Validate() error {
	f.Name = cleanName(f.Name)
	f.GPUModel = strings.TrimSpace(f.GPUModel)
	// Every field is checked, so the form shows all that is wrong at once
	// (the GPU fields in order: each rests on the one before).
	var errs collectInvalid
	if !catalogNameRe.MatchString(f.Name) {
		errs.add(invalid("name", "use 1–64 letters, digits, spaces and . _ ( ) + -"))
	} else if allDigits(f.Name) {
		errs.add(invalid("name", "a name of digits alone reads as an id in the API: add a letter"))
	}
	switch {
	case f.GPUCount < 0 || f.GPUCount > maxFlavorGPUs:
		errs.add(invalid("gpu_count", "must be between 0 and %d", maxFlavorGPUs))
	case f.GPUCount > 0 && f.GPUModel == "":
		errs.add(invalid("gpu_model", "is required when the flavor has GPUs"))
	default:
		if f.GPUCount == 0 {
			f.GPUModel = ""
		}
		if err := f.validateUnits(); err != nil {
			errs.add(err)
		} else if len(f.GPUModel) > 100 {
			errs.add(invalid("gpu_model", "is too long"))
		}
	}
	if err := FlavorCPURangeError(f.CPUMilli, 0); err != nil {
		errs.add(err)
	}
	if f.MemoryMiB < 64 || f.MemoryMiB > maxFlavorMemGiB*1024 {
		errs.add(invalid("memory_gib", "must be between 0.0625 (64 MiB) and %d GiB", maxFlavorMemGiB))
	}
	if f.MaxRuntimeS < 0 || f.MaxRuntimeS > 365*24*3600 {
		errs.add(invalid("max_runtime_hours", "must be between 0 (no limit) and 8760 hours"))
	}
	if f.GPUIdleTimeoutS < 0 || f.GPUIdleTimeoutS > 30*24*3600 {
		errs.add(invalid("gpu_idle_timeout_minutes", "must be between 0 (off) and 43200 minutes"))
	}
	if f.ShmMiB < 0 || int64(f.ShmMiB) > f.MemoryMiB {
		errs.add(invalid("shm_mib", "must be between 0 and the flavor's memory"))
	}
	return errs.err()
}

// migProfileRe is a MIG profile name as NVML tools print it: "1g.10gb",
// "1c.2g.20gb", "1g.10gb+me".
var migProfileRe = regexp.MustCompile(`^([0-9]c\.)?[0-9]g\.[0-9]{1,4}gb(\+[a-z]{1,8})*$`)

// validateUnits checks and normalises the unit kind fields.
func (f *Flavor) validateUnits() error {
	f.UnitKind = strings.TrimSpace(f.UnitKind)
	f.MIGProfile = strings.ToLower(strings.TrimSpace(f.MIGProfile))
	if f.UnitKind == "" || f.GPUCount == 0 {
		f.UnitKind = UnitGPU
	}
	switch f.UnitKind {
	case UnitGPU:
		f.MIGProfile = ""
	case UnitMIG:
		if !migProfileRe.MatchString(f.MIGProfile) {
			return invalid("mig_profile", "a MIG flavor needs a MIG profile such as 1g.10gb or 3g.40gb")
		}
	case UnitSlice:
		f.MIGProfile = ""
		if f.GPUCount != 1 {
			return invalid("gpu_count", "a shared-slice flavor asks for exactly 1 slice")
		}
	default:
		return invalid("unit_kind", "must be gpu, mig or slice")
	}
	return nil
}

// Shared reports whether the flavor runs on a slice of a shared GPU (no
// memory isolation from the other workbenches on it).
func (f *Flavor) Shared() bool { return f.UnitKind == UnitSlice && f.GPUCount > 0 }

// CreateFlavor validates and adds a flavor.
func (s *Store) CreateFlavor(ctx context.Context, f *Flavor) error {
	if err := f.Validate(); err != nil {
		return err
	}
	if err := s.checkCPUTwin(ctx, f); err != nil {
		return err
	}
	f.ID = 0
	if err := s.db.WithContext(ctx).Create(f).Error; err != nil {
		if uniqueViolation(err) {
			return taken("name", "a flavor with this name exists")
		}
		return err
	}
	return s.seedFlavorUnitPrice(ctx, f)
}

// seedFlavorUnitPrice gives a new MIG profile or slice model a default
// rate, so a MIG or slice flavor never runs unpriced (the admin reviews it like every seeded rate).
func (s *Store) seedFlavorUnitPrice(ctx context.Context, f *Flavor) error {
	switch {
	case f.GPUCount == 0:
		return nil
	case f.UnitKind == UnitMIG:
		return s.SeedUnitPrice(ctx, UnitMIG, f.MIGProfile, f.GPUModel)
	case f.UnitKind == UnitSlice:
		return s.SeedUnitPrice(ctx, UnitSlice, f.GPUModel, f.GPUModel)
	}
	return nil
}

// UpdateFlavor validates and replaces a flavor's fields.
func (s *Store) UpdateFlavor(ctx context.Context, f *Flavor) error {
	if err := f.Validate(); err != nil {
		return err
	}
	if err := s.checkCPUTwin(ctx, f); err != nil {
		return err
	}
	err := s.db.WithContext(ctx).Transaction(func(tx *gorm.DB) error {
		var before Flavor
		if err := tx.Select("name").Where("id = ?", f.ID).First(&before).Error; err != nil {
			if errors.Is(err, gorm.ErrRecordNotFound) {
				return ErrNotFound
			}
			return err
		}
		res := tx.Model(&Flavor{}).Where("id = ?", f.ID).Updates(map[string]any{
			"name": f.Name, "gpu_model": f.GPUModel, "gpu_count": f.GPUCount, "unit_kind": f.UnitKind, "mig_profile": f.MIGProfile, "cpu_milli": f.CPUMilli,
			"memory_mib": f.MemoryMiB, "shm_mib": f.ShmMiB, "max_runtime_s": f.MaxRuntimeS, "gpu_idle_timeout_s": f.GPUIdleTimeoutS, "cpu_twin_id": f.CPUTwinID, "enabled": f.Enabled, "updated_at": s.now()})
		if res.Error != nil {
			if uniqueViolation(res.Error) {
				return taken("name", "a flavor with this name exists")
			}
			return res.Error
		}
		if err := renameInAllowedLists(tx, quotaAllowedFlavors, before.Name, f.Name); err != nil {
			return err
		}
		return tx.First(f, f.ID).Error // the caller's f as stored (timestamps)
	})
	if err != nil {
		return err
	}
	return s.seedFlavorUnitPrice(ctx, f)
}

// ListFlavors returns flavors; onlyEnabled hides disabled ones.
//
// Cached like ListImages (the flavors are part of the catalog); each call
// gets its own copy.
func (s *Store) ListFlavors(ctx context.Context, onlyEnabled bool) ([]Flavor, error) {
	all, err := s.flavors.get(s.versions, []string{"flavors"}, func() ([]Flavor, error) {
		var out []Flavor
		return out, s.db.WithContext(ctx).Order("gpu_count, name").Find(&out).Error
	})
	if err != nil {
		return nil, err
	}
	out := make([]Flavor, 0, len(all))
	for _, f := range all {
		if !onlyEnabled || f.Enabled {
			out = append(out, f)
		}
	}
	return out, nil
}

// FlavorByID returns one flavor.
func (s *Store) FlavorByID(ctx context.Context, id int64) (*Flavor, error) {
	var f Flavor
	return &f, notFound(s.db.WithContext(ctx).First(&f, id).Error)
}

// FlavorByNameOrID resolves a flavor by name or id (byNameOrID).
func (s *Store) FlavorByNameOrID(ctx context.Context, key string) (*Flavor, error) {
	var f Flavor
	return &f, s.byNameOrID(ctx, &f, key)
}
