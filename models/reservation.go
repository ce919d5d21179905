package models

import (
	"cmp"
	"context"
	"fmt"
	"slices"
	"strings"
	"time"
	"unicode"
	"unicode/utf8"

	"gorm.io/gorm"
)

// Reservation books Units units of one kind for [StartsAt, EndsAt) for one
// user, or for the members of a group (docs/scheduling.md, "Reservations"):
// whole GPUs of GPUModel (UnitKind gpu), MIG instances of MIGProfile on GPUs
// of GPUModel (mig), or slices of the shared GPUs of GPUModel (slice).
type Reservation struct {
	ID     int64 `gorm:"primaryKey" json:"id"`
	UserID int64 `json:"-"` // the booker: pays for what nobody used
	// GroupID, when set, holds the units for the group's members (the
	// booker uses them only as a member). Holders and GroupName are read
	// with the booking (fillHolders): the members now, and its name.
	GroupID       *int64     `json:"-"`
	Holders       []int64    `gorm:"-" json:"-"`
	GroupName     string     `gorm:"-" json:"group,omitempty"`
	GPUModel      string     `gorm:"column:gpu_model" json:"gpu_model"`
	UnitKind      string     `gorm:"column:unit_kind" json:"unit_kind"`
	MIGProfile    string     `gorm:"column:mig_profile" json:"mig_profile"`
	Units         int        `json:"units"`
	StartsAt      time.Time  `json:"starts_at"`
	EndsAt        time.Time  `json:"ends_at"`
	Note          string     `json:"note"`
	CreatedBy     string     `json:"created_by"`
	CreatedAt     time.Time  `json:"created_at"`
	ReleasedAt    *time.Time `json:"released_at"`
	ReleaseReason string     `json:"release_reason"`
	// Settled once over (ended or released): the unit-seconds its booker
	// used and did not use of it, and what was billed for the latter.
	SettledAt         *time.Time `json:"-"`
	UsedUnitSeconds   int64      `json:"-"`
	UnusedUnitSeconds int64      `json:"-"`
	BilledMicros      int64      `json:"-"`
}

// For reports whether userID may use the booking's units: its booker, or
// for a group booking any member (Holders must have been read).
func (r *Reservation) For(userID int64) bool {
	if r.GroupID == nil {
		return r.UserID == userID
	}
	return slices.Contains(r.Holders, userID)
}

// HolderIDs are the users whose use of its units counts against it.
func (r *Reservation) HolderIDs() []int64 {
	if r.GroupID == nil {
		return []int64{r.UserID}
	}
	return r.Holders
}

// fillHolders reads the members and names of the groups of list's group
// bookings into Holders and GroupName.
func fillHolders(tx *gorm.DB, list []Reservation) error {
	var ids []int64
	for _, r := range list {
		if r.GroupID != nil {
			ids = append(ids, *r.GroupID)
		}
	}
	if len(ids) == 0 {
		return nil
	}
	var members []struct{ GroupID, UserID int64 }
	if err := tx.Table("group_members").Select("group_id, user_id").Where("group_id IN ?", ids).Order("user_id").Scan(&members).Error; err != nil {
		return err
	}
	var groups []Group
	if err := tx.Where("id IN ?", ids).Find(&groups).Error; err != nil {
		return err
	}
	byGroup := map[int64][]int64{}
	for _, m := range members {
		byGroup[m.GroupID] = append(byGroup[m.GroupID], m.UserID)
	}
	names := map[int64]string{}
	for _, g := range groups {
		names[g.ID] = g.Name
	}
	for i := range list {
		if g := list[i].GroupID; g != nil {
			// Never nil for a group booking: a group without members
			// holds its units for nobody, not for the booker.
			list[i].Holders, list[i].GroupName = append([]int64{}, byGroup[*g]...), names[*g]
		}
	}
	return nil
}

// Kind is the reservation's unit kind (gpu when empty).
func (r *Reservation) Kind() string {
	if r.UnitKind == "" {
		return UnitGPU
	}
	return r.UnitKind
}

// HeldUntil is when the booking stops holding units: its end, or its
// release when earlier.
func (r *Reservation) HeldUntil() time.Time {
	if r.ReleasedAt != nil && r.ReleasedAt.Before(r.EndsAt) {
		return *r.ReleasedAt
	}
	return r.EndsAt
}

// UnitLabel names what it books: "H100 80GB HBM3", "MIG 1g.10gb of H100
// 80GB HBM3", "slice of a shared H100 80GB HBM3".
func (r *Reservation) UnitLabel() string {
	m := ShortGPUName(r.GPUModel)
	switch r.Kind() {
	case UnitMIG:
		return "MIG " + r.MIGProfile + " of " + m
	case UnitSlice:
		return "slice of a shared " + m
	}
	return m
}

// MaxReservation bounds one booking (a course day, a deadline week).
const MaxReservation = 14 * 24 * time.Hour

// MaxReservationNote bounds a booking's note, in characters (the form's
// maxlength).
const MaxReservationNote = 200

// CreateReservation books r if, at every moment of its window, the
// reservations of the same units (kind, model, profile) overlapping it plus
// r fit in capacity units (those the pool can offer), and, when limited,
// if its user's booked unit-hours in every calendar week it touches stay
// within the user's cap (ReservationCapOf). The checks and the insert share
// one immediate transaction, so two bookings cannot both take the last
// units or the last hours of a cap. forHolder is the user's name when
// someone else (an administrator) books for them: a refusal by the user's
// quota then names whose quota it is; "" when users book for themselves.
// budget, when not nil, holds the booking to its booker's monthly limits
// (checkBookingBudget), in the same transaction.
func (s *Store) CreateReservation(ctx context.Context, r *Reservation, capacity int, limited bool, forHolder string, budget *BookingBudget) error {
	r.GPUModel = strings.TrimSpace(r.GPUModel)
	r.MIGProfile = strings.TrimSpace(r.MIGProfile)
	r.UnitKind = r.Kind()
	now := s.now()
	switch {
	case r.GPUModel == "":
		return invalid("gpu_model", "name the GPU model to book")
	case r.UnitKind != UnitGPU && r.UnitKind != UnitMIG && r.UnitKind != UnitSlice:
		return invalid("unit_kind", "book gpu, mig or slice units")
	case r.UnitKind == UnitMIG && r.MIGProfile == "":
		return invalid("mig_profile", "name the MIG profile to book (e.g. 1g.10gb)")
	case r.UnitKind != UnitMIG && r.MIGProfile != "":
		return invalid("mig_profile", "only MIG bookings name a profile")
	case r.Units <= 0:
		return invalid("units", "book at least one unit")
	case r.Units > capacity:
		return invalid("units", "the pool has %d × %s that can be offered", capacity, r.UnitLabel())
	case r.StartsAt.IsZero():
		return invalid("starts_at", "give the start of the window")
	case r.EndsAt.IsZero() || !r.EndsAt.After(r.StartsAt):
		return invalid("ends_at", "give an end after the start")
	case r.EndsAt.Before(now):
		return invalid("ends_at", "the window is over")
	case utf8.RuneCountInString(r.Note) > MaxReservationNote || !utf8.ValidString(r.Note) || strings.ContainsFunc(r.Note, unicode.IsControl):
		// Bounded as other names are: a note is stored twice (the booking
		// and its audit row) and shown on every admin's GPU page, and a
		// megabyte each grew the database and those pages without limit.
		return invalid("note", "a note is one line of at most 200 characters")
	case r.EndsAt.Sub(r.StartsAt) > MaxReservation:
		// "14 days", not Go's "336h0m0s".
		return invalid("ends_at", "a reservation lasts at most %s", fmt.Sprintf("%d days", MaxReservation/(24*time.Hour)))
	}
	r.StartsAt, r.EndsAt = r.StartsAt.UTC(), r.EndsAt.UTC()
	r.ID, r.CreatedAt, r.ReleasedAt, r.ReleaseReason = 0, now, nil, ""
	r.SettledAt, r.UsedUnitSeconds, r.UnusedUnitSeconds, r.BilledMicros = nil, 0, 0, 0
	return s.db.WithContext(ctx).Transaction(func(tx *gorm.DB) error {
		var over []Reservation
		if err := tx.Where("released_at IS NULL AND gpu_model = ? AND unit_kind = ? AND mig_profile = ? AND starts_at < ? AND ends_at > ?",
			r.GPUModel, r.UnitKind, r.MIGProfile, r.EndsAt, r.StartsAt).Find(&over).Error; err != nil {
			return err
		}
		// The peak of booked units is reached at some reservation's start.
		points := []time.Time{r.StartsAt}
		for _, o := range over {
			if o.StartsAt.After(r.StartsAt) {
				points = append(points, o.StartsAt)
			}
		}
		for _, at := range points {
			booked := r.Units
			for _, o := range over {
				if !o.StartsAt.After(at) && o.EndsAt.After(at) {
					booked += o.Units
				}
			}
			if booked > capacity {
				return &QuotaError{Limit: "reservations", Message: fullWindow(capacity, booked-r.Units, r.UnitLabel(), at)}
			}
		}
		// More than its holders may hold at once could never be used in
		// full, and would keep the rest from everyone else: the owner's
		// quota, or for a group's booking its members' together (a TA
		// allowed 1 GPU books 4 for a class of four).
		if r.GroupID != nil {
			if qe := beyondGroupQuota(tx, *r.GroupID, r.GroupName, r.Units, r.GPUModel); qe != nil {
				return qe
			}
		} else {
			lim, err := effectiveQuota(tx, r.UserID)
			if err != nil {
				return err
			}
			if qe := BeyondQuotaOf(lim, r.Units, r.GPUModel, forHolder); qe != nil {
				return qe
			}
		}
		if err := beyondQuotaTogether(tx, r, forHolder); err != nil {
			return err
		}
		if limited {
			if err := checkReservationCap(tx, r); err != nil {
				return err
			}
		}
		if budget != nil {
			if err := checkBookingBudget(tx, r, budget, now); err != nil {
				return err
			}
		}
		return tx.Create(r).Error
	})
}

// Reservations lists the unreleased reservations that end after since,
// by start.
func (s *Store) Reservations(ctx context.Context, since time.Time) ([]Reservation, error) {
	var out []Reservation
	db := s.db.WithContext(ctx)
	if err := db.Where("released_at IS NULL AND ends_at > ?", since).Order("starts_at, id").Find(&out).Error; err != nil {
		return nil, err
	}
	return out, fillHolders(db, out)
}

// ReservationByID returns one reservation.
func (s *Store) ReservationByID(ctx context.Context, id int64) (*Reservation, error) {
	var r Reservation
	db := s.db.WithContext(ctx)
	if err := db.First(&r, id).Error; err != nil {
		return nil, notFound(err)
	}
	list := []Reservation{r}
	return &list[0], fillHolders(db, list)
}

// ReleaseReservation ends a reservation early (cancelled, no-show).
func (s *Store) ReleaseReservation(ctx context.Context, id int64, reason string) error {
	now := s.now()
	return s.db.WithContext(ctx).Model(&Reservation{}).Where("id = ? AND released_at IS NULL", id).
		Updates(map[string]any{"released_at": now, "release_reason": reason}).Error
}

// ReleaseReservationsOf ends every booking of userID not yet over (a
// disabled account's bookings would hold units nobody can use) and
// returns how many it released.
func (s *Store) ReleaseReservationsOf(ctx context.Context, userID int64, reason string) (int64, error) {
	now := s.now()
	res := s.db.WithContext(ctx).Model(&Reservation{}).Where("user_id = ? AND released_at IS NULL AND ends_at > ?", userID, now).
		Updates(map[string]any{"released_at": now, "release_reason": reason})
	return res.RowsAffected, res.Error
}

// ReservationsByID reads the bookings named by queued launches, by id.
func (q *QueueTx) ReservationsByID(ids []int64) (map[int64]Reservation, error) {
	out := map[int64]Reservation{}
	if len(ids) == 0 {
		return out, nil
	}
	var list []Reservation
	if err := q.tx.Where("id IN ?", ids).Find(&list).Error; err != nil {
		return nil, err
	}
	// Holders too: a member who left a group no longer launches on its
	// booking (the queue asks Reservation.For).
	if err := fillHolders(q.tx, list); err != nil {
		return nil, err
	}
	for _, r := range list {
		out[r.ID] = r
	}
	return out, nil
}

// Pool is the reservation's kind of unit as the scheduler names pools:
// "gpu|<model>", "mig|<profile>|<model>", "slice|<model>" (see
// scheduler.Pool; models cannot import it).
func (r *Reservation) PoolKey() (kind, model, profile string) {
	return r.Kind(), r.GPUModel, r.MIGProfile
}

// ReservedForOthers counts, inside a launch's transaction, the units of
// need's kind that active bookings of other users hold back now (booked
// units their booker does not hold), and how many are free: a launch that
// does not queue may take only free units beyond them (its own bookings'
// units are its to take).
// ReservedForOthersNow is Tx.ReservedForOthers outside a launch's
// transaction: may userID launch need now (a GPU watch's question)?
func (s *Store) ReservedForOthersNow(ctx context.Context, need GPUNeed, userID int64, now time.Time) (free, held int, err error) {
	return (&Tx{tx: s.db.WithContext(ctx)}).ReservedForOthers(need, userID, now)
}

func (t *Tx) ReservedForOthers(need GPUNeed, userID int64, now time.Time) (free, held int, err error) {
	kind := need.kind()
	profile := ""
	if kind == UnitMIG {
		profile = need.Profile
	}
	var list []Reservation
	if err := t.tx.Where("released_at IS NULL AND starts_at <= ? AND ends_at > ? AND unit_kind = ? AND gpu_model = ? AND mig_profile = ?",
		now, now, kind, need.Model, profile).Find(&list).Error; err != nil {
		return 0, 0, err
	}
	if len(list) == 0 {
		return 0, 0, nil
	}
	if free, err = freeUnits(t.tx, need); err != nil {
		return 0, 0, err
	}
	if err := fillHolders(t.tx, list); err != nil {
		return 0, 0, err
	}
	held, err = heldBack(list, userID, func(h int64) (int, error) {
		var n int64
		err := t.tx.Table("gpu_allocations a").Joins("JOIN workbenches w ON w.id = a.workbench_id").
			Where("w.owner_id = ? AND a.kind = ? AND a.gpu_model = ? AND a.profile = ?", h, kind, need.Model, profile).
			Count(&n).Error
		return int(n), err
	})
	return free, held, err
}

// heldBack is what list, the active bookings of one kind of unit (holders
// read), holds back from userID now: the units of the bookings not for
// userID less what their holders use of them (inUse: a holder's units of
// the kind in use). Each holder's units in use count against their
// bookings once, in the order of the bookings.
func heldBack(list []Reservation, userID int64, inUse func(holder int64) (int, error)) (int, error) {
	list = slices.Clone(list)
	slices.SortFunc(list, func(a, b Reservation) int { return cmp.Compare(a.ID, b.ID) })
	held := 0
	using := map[int64]int{}
	for _, r := range list {
		if r.For(userID) {
			continue
		}
		use := 0
		for _, h := range r.HolderIDs() {
			if _, ok := using[h]; !ok {
				n, err := inUse(h)
				if err != nil {
					return 0, err
				}
				using[h] = n
			}
			take := min(using[h], r.Units-use)
			using[h] -= take
			use += take
		}
		held += r.Units - use
	}
	return held, nil
}

// UnitPool names one kind of unit as bookings do: whole GPUs of Model
// (Kind gpu), MIG instances of Profile on GPUs of Model (mig), or slices
// of Model's shared GPUs (slice; Profile "" but for mig).
type UnitPool struct{ Kind, Model, Profile string }

// HeldForOthersNow is, for the pages that show what is free, how many
// units of each kind active bookings of users other than userID hold back
// from userID at now: Tx.ReservedForOthers's held count for every kind at
// once, in a fixed number of queries whatever the number of bookings (the
// active bookings, their groups' members, their holders' units in use).
// Kinds nothing holds back are absent. A user's own bookings, and a
// group's they are a member of, hold nothing back from them.
func (s *Store) HeldForOthersNow(ctx context.Context, userID int64, now time.Time) (map[UnitPool]int, error) {
	db := s.db.WithContext(ctx)
	out := map[UnitPool]int{}
	var list []Reservation
	if err := db.Where("released_at IS NULL AND starts_at <= ? AND ends_at > ?", now, now).Order("id").Find(&list).Error; err != nil {
		return nil, err
	}
	if len(list) == 0 {
		return out, nil
	}
	if err := fillHolders(db, list); err != nil {
		return nil, err
	}
	byPool := map[UnitPool][]Reservation{}
	var holders []int64
	for _, r := range list {
		if r.For(userID) {
			continue
		}
		k := UnitPool{Kind: r.Kind(), Model: r.GPUModel}
		if k.Kind == UnitMIG {
			k.Profile = r.MIGProfile
		}
		byPool[k] = append(byPool[k], r)
		holders = append(holders, r.HolderIDs()...)
	}
	if len(byPool) == 0 {
		return out, nil
	}
	used := map[int64]map[UnitPool]int{}
	if len(holders) > 0 {
		var rows []struct {
			OwnerID                 int64
			Kind, GPUModel, Profile string
			N                       int
		}
		if err := db.Table("gpu_allocations a").Joins("JOIN workbenches w ON w.id = a.workbench_id").
			Select("w.owner_id AS owner_id, a.kind AS kind, a.gpu_model AS gpu_model, a.profile AS profile, COUNT(*) AS n").
			Where("w.owner_id IN ?", holders).Group("w.owner_id, a.kind, a.gpu_model, a.profile").Scan(&rows).Error; err != nil {
			return nil, err
		}
		for _, r := range rows {
			if used[r.OwnerID] == nil {
				used[r.OwnerID] = map[UnitPool]int{}
			}
			used[r.OwnerID][UnitPool{Kind: r.Kind, Model: r.GPUModel, Profile: r.Profile}] += r.N
		}
	}
	for k, rs := range byPool {
		held, _ := heldBack(rs, userID, func(h int64) (int, error) { return used[h][k], nil })
		if held > 0 {
			out[k] = held
		}
	}
	return out, nil
}

// fullWindow words a booking refused for want of units at at: how many more
// can still be booked then, out of capacity with reserved already taken.
// "only 8 can be booked; 8 are already reserved" read as if 8 were free.
func fullWindow(capacity, reserved int, unit string, at time.Time) string {
	when := at.Format("2006-01-02 15:04 UTC")
	if left := capacity - reserved; left > 0 {
		return Reasonf("only %d more × %s can be booked from %s; %d of %d are already reserved then",
			left, unit, when, reserved, capacity)
	}
	return Reasonf("no %s can be booked from %s: all %d are already reserved then", unit, when, capacity)
}
