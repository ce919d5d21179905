package models

import (
	"context"
	"fmt"
	"time"

	"gorm.io/gorm"
)

// The cap on booking (issue 12 §4 "a user (within quota) … books"): unit-
// hours a user may have reserved per calendar week, Monday 00:00 UTC to the
// next. A MIG instance-hour and a slice-hour count one unit-hour each, as a
// whole GPU-hour does: the cap bounds how long units are kept from others,
// whatever their size. Resolution as for quotas: the user's own row, else
// the most generous of the user's groups that have a cap (a group without
// one takes no part), else the default; no default row: no cap.
// Administrators book without a cap.

// ReservationCap is one scope's cap.
type ReservationCap struct {
	Scope            string    `gorm:"primaryKey" json:"scope"`
	SubjectID        int64     `gorm:"primaryKey" json:"subject_id"`
	UnitHoursPerWeek int64     `json:"unit_hours_per_week"`
	UpdatedBy        string    `json:"updated_by"`
	UpdatedAt        time.Time `json:"updated_at"`
}

// TableName is the caps table.
func (ReservationCap) TableName() string { return "reservation_caps" }

// SetReservationCap stores a scope's cap (hours nil: remove the row, so the
// scope inherits).
func (s *Store) SetReservationCap(ctx context.Context, scope string, subjectID int64, hours *int64, by string) error {
	switch scope {
	case ScopeDefault:
		subjectID = 0
	case ScopeUser, ScopeGroup:
		if subjectID <= 0 {
			return invalid("subject_id", "name the %s", scope)
		}
	default:
		return invalid("scope", "the scope is default, group or user")
	}
	if hours != nil && *hours < 0 {
		return invalid("unit_hours_per_week", "must be 0 or more (leave empty for no cap)")
	}
	if hours != nil && *hours > MaxQuotaNumber {
		// As a quota's numbers are bounded: a week has 168 hours, and
		// unit-hours times seconds must stay far inside int64.
		return invalid("unit_hours_per_week", "is too large")
	}
	return s.db.WithContext(ctx).Transaction(func(tx *gorm.DB) error {
		if err := tx.Where("scope = ? AND subject_id = ?", scope, subjectID).Delete(&ReservationCap{}).Error; err != nil {
			return err
		}
		if hours == nil {
			return nil
		}
		return tx.Create(&ReservationCap{Scope: scope, SubjectID: subjectID, UnitHoursPerWeek: *hours, UpdatedBy: by, UpdatedAt: s.now()}).Error
	})
}

// ReservationCaps lists every stored cap.
func (s *Store) ReservationCaps(ctx context.Context) ([]ReservationCap, error) {
	var out []ReservationCap
	err := s.db.WithContext(ctx).Order("scope, subject_id").Find(&out).Error
	return out, err
}

// ReservationCapOf is the cap that applies to a user (nil: none).
func (s *Store) ReservationCapOf(ctx context.Context, userID int64) (*int64, error) {
	return reservationCapOf(s.db.WithContext(ctx), userID)
}

func reservationCapOf(db *gorm.DB, userID int64) (*int64, error) {
	var rows []ReservationCap
	if err := db.Where("(scope = ? AND subject_id = 0) OR (scope = ? AND subject_id = ?) OR "+
		"(scope = ? AND subject_id IN (SELECT group_id FROM group_members WHERE user_id = ?))",
		ScopeDefault, ScopeUser, userID, ScopeGroup, userID).Find(&rows).Error; err != nil {
		return nil, err
	}
	var def, best *int64
	for _, r := range rows {
		v := r.UnitHoursPerWeek
		switch r.Scope {
		case ScopeUser:
			return &v, nil
		case ScopeDefault:
			def = &v
		case ScopeGroup:
			if best == nil || v > *best {
				best = &v
			}
		}
	}
	if best == nil {
		return def, nil
	}
	return best, nil
}

// WeekStart is the Monday 00:00 UTC that begins t's calendar week.
func WeekStart(t time.Time) time.Time {
	t = t.UTC()
	d := time.Date(t.Year(), t.Month(), t.Day(), 0, 0, 0, 0, time.UTC)
	return d.AddDate(0, 0, -((int(d.Weekday()) + 6) % 7))
}

// overlapSeconds is the length of [a0, a1) ∩ [b0, b1) in seconds.
func overlapSeconds(a0, a1, b0, b1 time.Time) int64 {
	from, to := a0, a1
	if b0.After(from) {
		from = b0
	}
	if b1.Before(to) {
		to = b1
	}
	if !to.After(from) {
		return 0
	}
	return int64(to.Sub(from) / time.Second)
}

// checkReservationCap refuses r when, in a week it touches, its user's
// bookings (what each held: to its end, or its release) plus r exceed the
// user's cap.
func checkReservationCap(tx *gorm.DB, r *Reservation) error {
	limit, err := reservationCapOf(tx, r.UserID)
	if err != nil || limit == nil {
		return err
	}
	first := WeekStart(r.StartsAt)
	var mine []Reservation
	if err := tx.Where("user_id = ? AND starts_at < ? AND ends_at > ?", r.UserID, r.EndsAt, first).Find(&mine).Error; err != nil {
		return err
	}
	for w := first; w.Before(r.EndsAt); w = w.AddDate(0, 0, 7) {
		end := w.AddDate(0, 0, 7)
		booked := int64(r.Units) * overlapSeconds(r.StartsAt, r.EndsAt, w, end)
		for _, o := range mine {
			booked += int64(o.Units) * overlapSeconds(o.StartsAt, o.HeldUntil(), w, end)
		}
		if booked > *limit*3600 {
			return &QuotaError{Limit: "reserved_unit_hours_per_week", Message: Reasonf(
				"with this booking, your bookings in the week of %s would come to %s unit-hours; your limit is %s unit-hours a week",
				w.Format("2006-01-02"), formatHours(booked), formatHours(*limit*3600))}
		}
	}
	return nil
}

// formatHours is unit-seconds as hours with one decimal, none for whole
// hours: "8 unit-hours" beside a limit of "4" (it read "8.0" beside "4").
func formatHours(secs int64) string {
	if secs%3600*10/3600 == 0 {
		return fmt.Sprintf("%d", secs/3600)
	}
	return fmt.Sprintf("%d.%d", secs/3600, secs%3600*10/3600)
}

// The admin setting "bill reserved-but-unused time" (default off).
const settingReservationBillUnused = "reservation_bill_unused"

// ReservationBillUnused reports whether reserved-but-unused time is billed.
func (s *Store) ReservationBillUnused(ctx context.Context) (bool, error) {
	var v []string
	if err := s.db.WithContext(ctx).Raw("SELECT value FROM settings WHERE key = ?", settingReservationBillUnused).Scan(&v).Error; err != nil {
		return false, err
	}
	return len(v) == 1 && v[0] == "on", nil
}

// SetReservationBillUnused turns billing of reserved-but-unused time on or
// off (it applies to bookings settled from then on).
func (s *Store) SetReservationBillUnused(ctx context.Context, on bool) error {
	v := "off"
	if on {
		v = "on"
	}
	return s.db.WithContext(ctx).Exec("INSERT INTO settings (key, value) VALUES (?, ?) ON CONFLICT(key) DO UPDATE SET value = excluded.value",
		settingReservationBillUnused, v).Error
}

// ResourceReservation is the ledger resource of reserved-but-unused time
// (its gpu_model column names the model, or the MIG profile).
const ResourceReservation = "reservation"

// UnsettledReservations lists the bookings over by now (ended or released)
// not yet settled.
func (s *Store) UnsettledReservations(ctx context.Context, now time.Time) ([]Reservation, error) {
	var out []Reservation
	db := s.db.WithContext(ctx)
	if err := db.Where("settled_at IS NULL AND (ends_at <= ? OR released_at IS NOT NULL)", now).Order("id").Find(&out).Error; err != nil {
		return nil, err
	}
	return out, fillHolders(db, out)
}

// SettleReservation records what a booking over was used for and, when
// line is given, appends that line (reserved-but-unused time billed) in
// the same transaction; settling twice does nothing.
func (s *Store) SettleReservation(ctx context.Context, id, used, unused int64, lines []LedgerEntry) error {
	now := s.now()
	return s.db.WithContext(ctx).Transaction(func(tx *gorm.DB) error {
		billed := int64(0)
		// A group booking's line is the group's on statements by group; a
		// personal booking's goes to the group its booker was in during
		// the time it bills (split at a move, as usage is).
		var filed []LedgerEntry
		for _, l := range lines {
			if l.GroupName != "" || l.GroupID != nil {
				filed = append(filed, l)
				continue
			}
			ts, err := groupTimelines(tx, []int64{l.UserID})
			if err != nil {
				return err
			}
			filed = append(filed, ts[l.UserID].Attribute([]LedgerEntry{l})...)
		}
		for i, l := range filed {
			l.ID, l.CreatedAt, l.IdempotencyKey = 0, now, fmt.Sprintf("reservation:%d", id)
			if i > 0 {
				l.IdempotencyKey = fmt.Sprintf("reservation:%d:%d", id, i)
			}
			if err := tx.Create(&l).Error; err != nil {
				return err
			}
			billed += l.AmountMicros
		}
		res := tx.Model(&Reservation{}).Where("id = ? AND settled_at IS NULL", id).
			Updates(map[string]any{"settled_at": now, "used_unit_seconds": used, "unused_unit_seconds": unused, "billed_micros": billed})
		if res.Error != nil {
			return res.Error
		}
		if res.RowsAffected == 0 {
			return ErrConflict // settled meanwhile: the line rolls back with it
		}
		return nil
	})
}

// ReservationsOverlapping lists every booking (released or not) whose held
// window overlaps [from, to) and had started by to, by start, with their
// holders: a group's booking read without its members counted none of
// their use while it ran.
func (s *Store) ReservationsOverlapping(ctx context.Context, from, to time.Time) ([]Reservation, error) {
	var out []Reservation
	db := s.db.WithContext(ctx)
	if err := db.Where("starts_at < ? AND ends_at > ? AND (released_at IS NULL OR released_at > starts_at)", to, from).
		Order("starts_at, id").Find(&out).Error; err != nil {
		return nil, err
	}
	return out, fillHolders(db, out)
}

// UnitSpan is a stretch of a user's use of units of one kind.
type UnitSpan struct {
	UserID int64      `gorm:"column:user_id"`
	Units  int        `gorm:"column:units"`
	Start  time.Time  `gorm:"column:span_start"`
	End    *time.Time `gorm:"column:span_end"`
	// EndReason is the interval's (EndRestartedOutside: the run went on
	// in the next one).
	EndReason string `gorm:"column:end_reason"`
	// Clipped: the span is the part of a run while its owner was a member
	// of the booking's group (BookingSpansOf), not the whole run: no
	// minimum charge stretches it.
	Clipped bool `gorm:"-"`
}

// UnitSpansOf lists the usage intervals of users (a booking's holders) on
// units of a kind (model, and profile for MIG) that overlap [from, to).
func (s *Store) UnitSpansOf(ctx context.Context, userIDs []int64, kind, model, profile string, from, to time.Time) ([]UnitSpan, error) {
	if len(userIDs) == 0 {
		return nil, nil
	}
	q := s.db.WithContext(ctx).Model(&UsageInterval{}).Select("user_id", "gpu_count AS units", "started_at AS span_start", "ended_at AS span_end", "end_reason").
		Where("user_id IN ? AND gpu_count > 0 AND gpu_model = ? AND started_at < ? AND (ended_at IS NULL OR ended_at > ?)", userIDs, model, to, from)
	if kind == UnitGPU || kind == "" {
		q = q.Where("unit_kind IN ('', 'gpu')")
	} else {
		q = q.Where("unit_kind = ?", kind)
	}
	if kind == UnitMIG {
		q = q.Where("unit_profile = ?", profile)
	}
	var out []UnitSpan
	err := q.Scan(&out).Error
	return out, err
}

// BookingSpansOf is UnitSpansOf of the holders of r over [from, to), as
// they were then: for a group booking, its members' runs only while they
// were members (the membership record, group_memberships), those who left
// since included. Its members now (r.Holders) are who may use it now; what
// was used of it, and so what its booker pays for unused, is measured by
// who was a member during it: a member removed mid-booking had their use
// dropped from it, and one added late had all their runs counted.
func (s *Store) BookingSpansOf(ctx context.Context, r *Reservation, kind, model, profile string, from, to time.Time) ([]UnitSpan, error) {
	if r.GroupID == nil {
		return s.UnitSpansOf(ctx, []int64{r.UserID}, kind, model, profile, from, to)
	}
	var stretches []membershipRow
	if err := s.db.WithContext(ctx).Raw("SELECT user_id, from_at, until_at FROM group_memberships WHERE group_id = ? ORDER BY user_id, id", *r.GroupID).
		Scan(&stretches).Error; err != nil {
		return nil, err
	}
	var ids []int64
	for _, m := range stretches {
		if (m.FromAt == nil || m.FromAt.Before(to)) && (m.UntilAt == nil || m.UntilAt.After(from)) && (len(ids) == 0 || ids[len(ids)-1] != m.UserID) {
			ids = append(ids, m.UserID)
		}
	}
	spans, err := s.UnitSpansOf(ctx, ids, kind, model, profile, from, to)
	if err != nil {
		return nil, err
	}
	var out []UnitSpan
	for _, sp := range spans {
		for _, m := range stretches {
			if m.UserID != sp.UserID {
				continue
			}
			part := sp
			if m.FromAt != nil && m.FromAt.After(part.Start) {
				part.Start, part.Clipped = *m.FromAt, true
			}
			if m.UntilAt != nil && (part.End == nil || m.UntilAt.Before(*part.End)) {
				until := *m.UntilAt
				part.End, part.Clipped = &until, true
			}
			if part.End == nil || part.End.After(part.Start) {
				out = append(out, part)
			}
		}
	}
	return out, nil
}

// IsSettled reports whether a booking has been settled.
func (r *Reservation) IsSettled() bool { return r.SettledAt != nil }
