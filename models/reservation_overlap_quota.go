package models

import (
	"time"

	"gorm.io/gorm"
)

// holderPeak is the most units r's holder would have booked at once during
// r's window, r included: its user's personal bookings for a personal one,
// its group's bookings for a group's. all counts every kind and model (a
// quota's GPUs at once count MIG instances and slices as one each);
// sameModel those of r's GPU model. at is when the peak of sameModel is
// reached, allAt when all is.
//
// Each booking was bounded by the quota on its own: two overlapping
// bookings of 4 GPUs each were taken for a user allowed 4 at once, and a
// group's several bookings for its members' capacity once each, though
// the units beyond it could never be used and were kept from everyone
// else.
func holderPeak(tx *gorm.DB, r *Reservation) (all, sameModel int, at, allAt time.Time, err error) {
	q := tx.Where("released_at IS NULL AND starts_at < ? AND ends_at > ?", r.EndsAt, r.StartsAt)
	if r.GroupID != nil {
		q = q.Where("group_id = ?", *r.GroupID)
	} else {
		q = q.Where("user_id = ? AND group_id IS NULL", r.UserID)
	}
	var over []Reservation
	if err := q.Find(&over).Error; err != nil {
		return 0, 0, time.Time{}, time.Time{}, err
	}
	// The peak is reached at some booking's start.
	points := []time.Time{r.StartsAt}
	for _, o := range over {
		if o.StartsAt.After(r.StartsAt) {
			points = append(points, o.StartsAt)
		}
	}
	all, sameModel, at, allAt = r.Units, r.Units, r.StartsAt, r.StartsAt
	for _, p := range points {
		a, m := r.Units, r.Units
		for _, o := range over {
			if !o.StartsAt.After(p) && o.EndsAt.After(p) {
				a += o.Units
				if o.GPUModel == r.GPUModel {
					m += o.Units
				}
			}
		}
		if m > sameModel {
			sameModel, at = m, p
		}
		if a > all {
			all, allAt = a, p
		}
	}
	return all, sameModel, at, allAt, nil
}

// beyondQuotaTogether refuses r when, with the holder's other bookings
// overlapping it, more units would be booked at once than the holder may
// hold (the bound BeyondQuotaOf and beyondGroupQuota apply to r alone).
func beyondQuotaTogether(tx *gorm.DB, r *Reservation, forHolder string) error {
	all, same, at, allAt, err := holderPeak(tx, r)
	if err != nil || (all == r.Units && same == r.Units) {
		return err
	}
	when := at.Format("2006-01-02 15:04 UTC")
	if r.GroupID != nil {
		together, bounded, err := membersTogether(tx, *r.GroupID, r.GPUModel)
		if err != nil || !bounded {
			return err
		}
		if same > together {
			return &QuotaError{Limit: "max_gpus", Message: Reasonf(
				"with the group's other bookings, %d × %s would be booked for group %s at %s; its members may hold at most %d × %s at once together",
				same, ShortGPUName(r.GPUModel), r.GroupName, when, together, ShortGPUName(r.GPUModel))}
		}
		return nil
	}
	lim, err := effectiveQuota(tx, r.UserID)
	if err != nil {
		return err
	}
	if n, ok := lim.MaxGPUsPerModel[r.GPUModel]; ok && same > n {
		msg := Reasonf("with your other bookings, %d × %s would be booked for you at %s; your quota allows at most %d × %s at once",
			same, ShortGPUName(r.GPUModel), when, n, ShortGPUName(r.GPUModel))
		if forHolder != "" {
			msg = Reasonf("with their other bookings, %d × %s would be booked for %s at %s; their quota allows at most %d × %s at once",
				same, ShortGPUName(r.GPUModel), forHolder, when, n, ShortGPUName(r.GPUModel))
		}
		return &QuotaError{Limit: "max_gpus_per_model", Message: msg}
	}
	if lim.MaxGPUs != nil && int64(all) > *lim.MaxGPUs {
		when := allAt.Format("2006-01-02 15:04 UTC")
		msg := Reasonf("with your other bookings, %d units would be booked for you at %s; your quota allows at most %d GPUs at once, each MIG instance or GPU slice counting as one",
			all, when, *lim.MaxGPUs)
		if forHolder != "" {
			msg = Reasonf("with their other bookings, %d units would be booked for %s at %s; their quota allows at most %d GPUs at once, each MIG instance or GPU slice counting as one",
				all, forHolder, when, *lim.MaxGPUs)
		}
		return &QuotaError{Limit: "max_gpus", Message: msg}
	}
	return nil
}
