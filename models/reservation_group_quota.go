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
	together, bounded, err := membersTogether(tx, groupID, model)
	if err != nil || !bounded || together >= units {
		return err
	}
	if together == 1 {
		return &QuotaError{Limit: "max_gpus", Final: true, Message: Reasonf(
			"the members of group %s may hold at most 1 × %s at once together; raise their quotas before booking this many", group, ShortGPUName(model))}
	}
	return &QuotaError{Limit: "max_gpus", Final: true, Message: Reasonf(
		"the members of group %s may hold at most %d × %s at once together; raise their quotas before booking this many", group, together, ShortGPUName(model))}
}

// membersTogether is how many units of model the members of group
// groupID may hold at once together (bounded false: a member without a
// bound makes the group's unbounded).
func membersTogether(tx *gorm.DB, groupID int64, model string) (together int, bounded bool, err error) {
	var members []int64
	if err := tx.Table("group_members").Where("group_id = ?", groupID).Pluck("user_id", &members).Error; err != nil {
		return 0, false, err
	}
	for _, id := range members {
		lim, err := effectiveQuota(tx, id)
		if err != nil {
			return 0, false, err
		}
		n, ok := memberMaxUnits(lim, model)
		if !ok {
			return 0, false, nil
		}
		together += n
	}
	return together, true, nil
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
