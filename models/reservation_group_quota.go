package models

import (
	"gorm.io/gorm"
)

// beyondGroupQuota refuses a booking of units × model for group groupID
// when its members together may not hold that many at once (each
// member's quota: GPUs at once, and of that model), as BeyondQuota
// refuses one person's booking. A member without a bound makes the
// group's unbounded. A read error refuses too: a booking not checked is
// not taken.
func beyondGroupQuota(tx *gorm.DB, groupID int64, group string, units int, model string) error {
	var members []int64
	if err := tx.Table("group_members").Where("group_id = ?", groupID).Pluck("user_id", &members).Error; err != nil {
		return err
	}
	together := 0
	for _, id := range members {
		lim, err := effectiveQuota(tx, id)
		if err != nil {
			return err
		}
		n, bounded := memberMaxUnits(lim, model)
		if !bounded {
			return nil
		}
		together += n
		if together >= units {
			return nil
		}
	}
	if together == 1 {
		return &QuotaError{Limit: "max_gpus", Final: true, Message: Reasonf(
			"the members of group %s may hold at most 1 × %s at once together; raise their quotas before booking this many", group, ShortGPUName(model))}
	}
	return &QuotaError{Limit: "max_gpus", Final: true, Message: Reasonf(
		"the members of group %s may hold at most %d × %s at once together; raise their quotas before booking this many", group, together, ShortGPUName(model))}
}

// memberMaxUnits is how many units of model lim lets a person hold at
// once (bounded false: no bound).
func memberMaxUnits(lim Limits, model string) (n int, bounded bool) {
	if lim.MaxGPUs != nil {
		n, bounded = int(*lim.MaxGPUs), true
	}
	if m, ok := lim.MaxGPUsPerModel[model]; ok && (!bounded || m < n) {
		n, bounded = m, true
	}
	return n, bounded
}
