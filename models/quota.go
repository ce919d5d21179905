package models

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"time"

	"gorm.io/gorm"
)

// Quota scopes.
const (
	ScopeDefault = "default"
	ScopeUser    = "user"
	ScopeGroup   = "group"
)

// Limits are quota values; nil means unlimited (for lists: all allowed).
// JSON names are the API contract (SPEC §8).
type Limits struct {
	MaxGPUs              *int64         `json:"max_gpus"`
	MaxGPUsPerModel      map[string]int `json:"max_gpus_per_model"`
	MaxWorkbenches       *int64         `json:"max_workbenches"`
	GPUHoursPerMonth     *int64         `json:"gpu_hours_per_month"`
	BudgetPerMonthMicros *int64         `json:"budget_per_month_micros"`
	MaxRuntimeHours      *int64         `json:"max_runtime_hours"`
	MinIdleMinutes       *int64         `json:"min_idle_minutes"`
	MaxIdleMinutes       *int64         `json:"max_idle_minutes"`
	// MaxStorageGiB bounds what the user's home volumes hold, as last
	// measured (storage metering): over it, launches and starts are
	// refused; running workbenches keep running.
	MaxStorageGiB  *int64   `json:"max_storage_gib"`
	AllowedImages  []string `json:"allowed_images"`
	AllowedFlavors []string `json:"allowed_flavors"`
}

// Version names these values as stored: a form carries the version it
// was shown with, so a save over someone else's change since is noticed
// rather than silently undoing it. Equal limits have equal versions
// (encoding/json sorts the per-model map's keys).
func (l Limits) Version() string {
	b, _ := json.Marshal(l)
	sum := sha256.Sum256(b)
	return hex.EncodeToString(sum[:8])
}

// MaxQuotaNumber bounds whole-number limits (GPUs, workbenches, hours,
// minutes), far inside int64 arithmetic: GPU-hours are turned into seconds,
// and a limit near int64's top wrapped around to "used up".
const MaxQuotaNumber = 1_000_000_000

// MaxBudgetMicros bounds a monthly budget: a billion in the currency, far
// inside int64 even after credits make the month's spending negative (a
// budget at int64's top minus a negative spend wrapped around, and every
// running workbench of the user was stopped as over budget).
const MaxBudgetMicros = 1_000_000_000 * 1_000_000

// Validate rejects negative limits and whole-number limits beyond
// MaxQuotaNumber (the console's form refused them; the API took them).
func (l *Limits) Validate() error {
	if l.MinIdleMinutes != nil && l.MaxIdleMinutes != nil && *l.MinIdleMinutes > *l.MaxIdleMinutes {
		return invalid("min_idle_minutes", "must not be above the maximum idle timeout")
	}
	for name, v := range map[string]*int64{"max_gpus": l.MaxGPUs, "max_workbenches": l.MaxWorkbenches,
		"gpu_hours_per_month": l.GPUHoursPerMonth, "budget_per_month_micros": l.BudgetPerMonthMicros, "max_runtime_hours": l.MaxRuntimeHours,
		"min_idle_minutes": l.MinIdleMinutes, "max_idle_minutes": l.MaxIdleMinutes, "max_storage_gib": l.MaxStorageGiB} {
		if v != nil && *v < 0 {
			return invalid(name, "must be 0 or more (leave empty for unlimited)")
		}
		if v != nil && *v > MaxQuotaNumber && name != "budget_per_month_micros" {
			return invalid(name, "is too large (at most %d; leave empty for unlimited)", MaxQuotaNumber)
		}
		if v != nil && *v > MaxBudgetMicros && name == "budget_per_month_micros" {
			return invalid(name, "is too large (at most a billion a month; leave empty for unlimited)")
		}
	}
	for m, n := range l.MaxGPUsPerModel {
		if n < 0 || m == "" {
			return invalid("max_gpus_per_model", "each model needs a name and a limit of 0 or more")
		}
		if n > MaxQuotaNumber {
			return invalid("max_gpus_per_model", "is too large (at most %d; leave empty for unlimited)", MaxQuotaNumber)
		}
	}
	return nil
}

type quotaRow struct {
	ID                   int64 `gorm:"primaryKey"`
	Scope                string
	SubjectID            int64
	MaxGPUs              *int64  `gorm:"column:max_gpus"`
	MaxGPUsPerModel      *string `gorm:"column:max_gpus_per_model"`
	MaxWorkbenches       *int64
	GPUHoursPerMonth     *int64 `gorm:"column:gpu_hours_per_month"`
	BudgetPerMonthMicros *int64
	MaxRuntimeHours      *int64
	MinIdleMinutes       *int64
	MaxIdleMinutes       *int64
	MaxStorageGiB        *int64 `gorm:"column:max_storage_gib"`
	AllowedImages        *string
	AllowedFlavors       *string
	UpdatedBy            string
	UpdatedAt            time.Time
}

func (quotaRow) TableName() string { return "quotas" }

func (r quotaRow) limits() Limits {
	l := Limits{MaxGPUs: r.MaxGPUs, MaxWorkbenches: r.MaxWorkbenches, GPUHoursPerMonth: r.GPUHoursPerMonth,
		BudgetPerMonthMicros: r.BudgetPerMonthMicros, MaxRuntimeHours: r.MaxRuntimeHours,
		MinIdleMinutes: r.MinIdleMinutes, MaxIdleMinutes: r.MaxIdleMinutes, MaxStorageGiB: r.MaxStorageGiB}
	if r.MaxGPUsPerModel != nil {
		_ = json.Unmarshal([]byte(*r.MaxGPUsPerModel), &l.MaxGPUsPerModel)
	}
	if r.AllowedImages != nil {
		_ = json.Unmarshal([]byte(*r.AllowedImages), &l.AllowedImages)
	}
	if r.AllowedFlavors != nil {
		_ = json.Unmarshal([]byte(*r.AllowedFlavors), &l.AllowedFlavors)
	}
	return l
}

func jsonPtr(v any, isNil bool) *string {
	if isNil {
		return nil
	}
	b, _ := json.Marshal(v)
	s := string(b)
	return &s
}

// SetQuota stores the limits of a scope (subjectID 0 for the default).
func (s *Store) SetQuota(ctx context.Context, scope string, subjectID int64, l Limits, by string) error {
	if err := l.Validate(); err != nil {
		return err
	}
	row := quotaRow{Scope: scope, SubjectID: subjectID, MaxGPUs: l.MaxGPUs, MaxWorkbenches: l.MaxWorkbenches,
		GPUHoursPerMonth: l.GPUHoursPerMonth, BudgetPerMonthMicros: l.BudgetPerMonthMicros, MaxRuntimeHours: l.MaxRuntimeHours,
		MinIdleMinutes: l.MinIdleMinutes, MaxIdleMinutes: l.MaxIdleMinutes, MaxStorageGiB: l.MaxStorageGiB,
		MaxGPUsPerModel: jsonPtr(l.MaxGPUsPerModel, l.MaxGPUsPerModel == nil),
		AllowedImages:   jsonPtr(l.AllowedImages, l.AllowedImages == nil),
		AllowedFlavors:  jsonPtr(l.AllowedFlavors, l.AllowedFlavors == nil),
		UpdatedBy:       by, UpdatedAt: s.now()}
	return s.db.WithContext(ctx).Transaction(func(tx *gorm.DB) error {
		if err := tx.Where("scope = ? AND subject_id = ?", scope, subjectID).Delete(&quotaRow{}).Error; err != nil {
			return err
		}
		return tx.Create(&row).Error
	})
}

// Quota returns the limits stored for a scope and whether a row exists.
func (s *Store) Quota(ctx context.Context, scope string, subjectID int64) (Limits, bool, error) {
	return quotaOf(s.db.WithContext(ctx), scope, subjectID)
}

func quotaOf(db *gorm.DB, scope string, subjectID int64) (Limits, bool, error) {
	var row quotaRow
	err := db.Where("scope = ? AND subject_id = ?", scope, subjectID).First(&row).Error
	if errors.Is(err, gorm.ErrRecordNotFound) {
		return Limits{}, false, nil
	}
	if err != nil {
		return Limits{}, false, err
	}
	return row.limits(), true, nil
}

// EffectiveQuota resolves a user's limits, field by field: the user's own
// override where it sets a value, else the most generous value among the
// user's groups that set it, else the global default.
func (s *Store) EffectiveQuota(ctx context.Context, userID int64) (Limits, error) {
	return effectiveQuota(s.rdb.WithContext(ctx), userID)
}

func effectiveQuota(db *gorm.DB, userID int64) (Limits, error) {
	def, _, err := quotaOf(db, ScopeDefault, 0)
	if err != nil {
		return Limits{}, err
	}
	var rows []quotaRow
	if err := db.Where("scope = ? AND subject_id IN (SELECT group_id FROM group_members WHERE user_id = ?)", ScopeGroup, userID).
		Find(&rows).Error; err != nil {
		return Limits{}, err
	}
	var groups []Limits
	for _, r := range rows {
		groups = append(groups, r.limits())
	}
	user, hasUser, err := quotaOf(db, ScopeUser, userID)
	if err != nil {
		return Limits{}, err
	}
	var up *Limits
	if hasUser {
		up = &user
	}
	return ResolveLimits(def, groups, up), nil
}

// ResolveLimits is the pure resolution rule of EffectiveQuota.
func ResolveLimits(def Limits, groups []Limits, user *Limits) Limits {
	out := def
	if len(groups) > 0 {
		out.MaxGPUs = mostGenerous(groups, func(l Limits) *int64 { return l.MaxGPUs }, def.MaxGPUs)
		out.MaxWorkbenches = mostGenerous(groups, func(l Limits) *int64 { return l.MaxWorkbenches }, def.MaxWorkbenches)
		out.GPUHoursPerMonth = mostGenerous(groups, func(l Limits) *int64 { return l.GPUHoursPerMonth }, def.GPUHoursPerMonth)
		out.BudgetPerMonthMicros = mostGenerous(groups, func(l Limits) *int64 { return l.BudgetPerMonthMicros }, def.BudgetPerMonthMicros)
		out.MaxRuntimeHours = mostGenerous(groups, func(l Limits) *int64 { return l.MaxRuntimeHours }, def.MaxRuntimeHours)
		out.MaxIdleMinutes = mostGenerous(groups, func(l Limits) *int64 { return l.MaxIdleMinutes }, def.MaxIdleMinutes)
		out.MaxStorageGiB = mostGenerous(groups, func(l Limits) *int64 { return l.MaxStorageGiB }, def.MaxStorageGiB)
		out.MinIdleMinutes = leastOf(groups, func(l Limits) *int64 { return l.MinIdleMinutes }, def.MinIdleMinutes)
		out.MaxGPUsPerModel = generousMap(groups, def.MaxGPUsPerModel)
		out.AllowedImages = unionLists(groups, func(l Limits) []string { return l.AllowedImages }, def.AllowedImages)
		out.AllowedFlavors = unionLists(groups, func(l Limits) []string { return l.AllowedFlavors }, def.AllowedFlavors)
	}
	if user != nil {
		for _, f := range []struct{ dst, src **int64 }{{&out.MaxGPUs, &user.MaxGPUs}, {&out.MaxWorkbenches, &user.MaxWorkbenches},
			{&out.GPUHoursPerMonth, &user.GPUHoursPerMonth}, {&out.BudgetPerMonthMicros, &user.BudgetPerMonthMicros},
			{&out.MaxRuntimeHours, &user.MaxRuntimeHours}, {&out.MinIdleMinutes, &user.MinIdleMinutes},
			{&out.MaxIdleMinutes, &user.MaxIdleMinutes}, {&out.MaxStorageGiB, &user.MaxStorageGiB}} {
			if *f.src != nil {
				*f.dst = *f.src
			}
		}
		if user.MaxGPUsPerModel != nil {
			out.MaxGPUsPerModel = user.MaxGPUsPerModel
		}
		if user.AllowedImages != nil {
			out.AllowedImages = user.AllowedImages
		}
		if user.AllowedFlavors != nil {
			out.AllowedFlavors = user.AllowedFlavors
		}
	}
	return out
}

// The groups' values are resolved among the groups that set them: a
// group's empty field (or a group with no quota row) takes no part, and
// the default applies only where no group of the user sets the field. So
// saving a group's row with every field empty changes nothing, as the
// console promises ("empty fields inherit"), and a group that only lists
// allowed images does not lift another group's GPU limit. (Until December
// 2026 an empty field stood for the default's value, so with an unlimited
// default an empty row lifted every limit of its members' other groups,
// while the same group with no row did not.)

// mostGenerous picks the most generous value among the groups that set
// one; the default where none does.
func mostGenerous(groups []Limits, get func(Limits) *int64, def *int64) *int64 {
	return bestOf(groups, get, def, func(v, best int64) bool { return v > best })
}

// leastOf is mostGenerous for lower bounds: the smallest value among the
// groups that set one; the default where none does.
func leastOf(groups []Limits, get func(Limits) *int64, def *int64) *int64 {
	return bestOf(groups, get, def, func(v, best int64) bool { return v < best })
}

// bestOf walks the values the groups set and keeps the one better beats;
// def when no group sets one.
func bestOf(groups []Limits, get func(Limits) *int64, def *int64, better func(v, best int64) bool) *int64 {
	var best *int64
	for _, g := range groups {
		if v := get(g); v != nil && (best == nil || better(*v, *best)) {
			best = v
		}
	}
	if best == nil {
		return def
	}
	return best
}

// generousMap resolves per-model GPU limits across the groups that set a
// map (the default's where none does). A model stays limited only when
// every one of them limits it, at the largest of their limits: a group
// whose map does not limit a model leaves its members unlimited on it.
func generousMap(groups []Limits, def map[string]int) map[string]int {
	var out map[string]int
	set := false
	for _, g := range groups {
		m := g.MaxGPUsPerModel
		if m == nil {
			continue
		}
		if !set {
			set = true
			out = make(map[string]int, len(m))
			for k, n := range m {
				out[k] = n
			}
			continue
		}
		for k, cur := range out {
			n, ok := m[k]
			switch {
			case !ok:
				delete(out, k)
			case n > cur:
				out[k] = n
			}
		}
	}
	if !set {
		return def
	}
	if len(out) == 0 {
		return nil
	}
	return out
}

// unionLists joins the allowed lists of the groups that set one (the
// default's where none does).
func unionLists(groups []Limits, get func(Limits) []string, def []string) []string {
	seen := map[string]bool{}
	var out []string
	for _, g := range groups {
		l := get(g)
		if l == nil {
			continue
		}
		if out == nil {
			out = []string{}
		}
		for _, x := range l {
			if !seen[x] {
				seen[x] = true
				out = append(out, x)
			}
		}
	}
	if out == nil {
		return def
	}
	return out
}

// QuotasOf reads the own limits of many subjects of one scope in one
// statement (the quota console's page), keyed by subject id; a subject
// without a quota of its own is absent.
func (s *Store) QuotasOf(ctx context.Context, scope string, subjectIDs []int64) (map[int64]Limits, error) {
	out := make(map[int64]Limits, len(subjectIDs))
	if len(subjectIDs) == 0 {
		return out, nil
	}
	var rows []quotaRow
	if err := s.rdb.WithContext(ctx).Where("scope = ? AND subject_id IN ?", scope, subjectIDs).Find(&rows).Error; err != nil {
		return nil, err
	}
	for _, r := range rows {
		out[r.SubjectID] = r.limits()
	}
	return out, nil
}
