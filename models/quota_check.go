package models

import (
	"context"
	"time"

	"workbench/models/pricing"
)

// QuotaError is a launch refused by a quota; it names the limit.
type QuotaError struct {
	Limit   string
	Message string
	// Final: no stop of the user's other workbenches clears it (the ask
	// alone is over a concurrency limit), so a queued launch must not wait.
	Final bool
	// WayOut and CPUFlavor: for the storage limit, what the user can
	// start to clean up (storageWayOut); empty for the other limits.
	WayOut    string
	CPUFlavor string
}

// BeyondQuota says why holding units of model at once is more than the
// quota allows in all (nil when it is not): a launch of that many can never
// start and a booking of that many can never be used in full.
func BeyondQuota(lim Limits, units int, model string) *QuotaError {
	return BeyondQuotaOf(lim, units, model, "")
}

// BeyondQuotaOf is BeyondQuota worded for someone acting for holder (an
// administrator booking for a user): the limit is the holder's, so the
// reason names them instead of saying "your". An empty holder says "your".
func BeyondQuotaOf(lim Limits, units int, model, holder string) *QuotaError {
	if units <= 0 {
		return nil
	}
	if lim.MaxGPUs != nil && int64(units) > *lim.MaxGPUs {
		msg := Reasonf("your quota allows at most %d GPUs at once", *lim.MaxGPUs)
		if *lim.MaxGPUs == 1 {
			msg = Reasonf("your quota allows at most 1 GPU at once")
		}
		if holder != "" {
			msg = Reasonf("%s's quota allows at most %d GPUs at once; raise it before booking this many", holder, *lim.MaxGPUs)
			if *lim.MaxGPUs == 1 {
				msg = Reasonf("%s's quota allows at most 1 GPU at once; raise it before booking this many", holder)
			}
		}
		return &QuotaError{Limit: "max_gpus", Message: msg, Final: true}
	}
	if n, ok := lim.MaxGPUsPerModel[model]; ok && units > n {
		msg := Reasonf("your quota allows at most %d × %s at once", n, ShortGPUName(model))
		if holder != "" {
			msg = Reasonf("%s's quota allows at most %d × %s at once; raise it before booking this many", holder, n, ShortGPUName(model))
		}
		return &QuotaError{Limit: "max_gpus_per_model", Message: msg, Final: true}
	}
	return nil
}

func (e *QuotaError) Error() string { return e.Message }

// LaunchAsk is what a launch would add.
type LaunchAsk struct {
	UserID   int64
	Image    string
	Flavor   string
	GPUModel string
	GPUs     int
	// Kind is what GPUs counts (UnitGPU, UnitMIG, UnitSlice; "" is
	// UnitGPU): a refusal that counts MIG instances or slices says so.
	Kind string
	// IdleTimeout is the idle timeout the user picked.
	IdleTimeout time.Duration
	// MinChargeMicros is what the run costs at least (the minimum charge,
	// SPEC §6 rule 3, at the rates in force): a budget that cannot cover it
	// refuses the launch, since stopping early would not lower the charge.
	MinChargeMicros int64
	MinChargeSecs   int64
	// Currency is the ISO code the refusal's amounts are written in ("the
	// 0.10 USD left"); empty writes bare amounts.
	Currency string
	// SetAsideMicros is what the user's bookings hold back of this
	// month's budget for their unused time (orchestrator's set-aside):
	// the launch must fit beside it. Zero when the launch draws on a
	// booking, or unused time is not billed.
	SetAsideMicros int64
	// Start: the start of a stopped workbench (Flavor is its own flavor),
	// whose CPU-only twin a refusal over the storage limit offers.
	Start bool
	// Placing is set when the queue places a launch that waited: its
	// image and flavor passed the allow-lists when it joined the queue,
	// and the ask carries no names to check them again.
	Placing bool
}

// MonthUsage is a user's use of monthly limits, ledger plus the part of
// running workbenches not yet in it.
type MonthUsage struct {
	GPUSeconds   int64
	AmountMicros int64
	// CreditMicros is the part of AmountMicros that is credits (zero or
	// less): an admin's credit gives budget back, and the user's page says
	// so beside a spend that may read below zero.
	CreditMicros int64
	// AccruingMicros is the part of AmountMicros not in the ledger yet
	// (Billing.Accruing, read in the same snapshot): the statement shows
	// it as pending beside the month's lines.
	AccruingMicros int64
}

// CheckLaunchQuota is the quota check that runs inside the launch
// transaction (see CreateWorkbench): it reads the user's running workbenches
// under the same write lock that binds the GPUs, so a burst of launches
// cannot overshoot — the idea of Coder's workspacequota, with SQLite's
// BEGIN IMMEDIATE for the lock. Monthly figures come from the caller (they
// include live pricing of running workbenches, which needs the price list).
func CheckLaunchQuota(ask LaunchAsk, month MonthUsage) func(tx *Tx) error {
	return func(tx *Tx) error {
		lim, err := effectiveQuota(tx.tx, ask.UserID)
		if err != nil {
			return err
		}
		if !ask.Placing && lim.AllowedImages != nil && !contains(lim.AllowedImages, ask.Image) {
			return &QuotaError{Limit: "allowed_images", Message: Reasonf("your quota does not allow the image %q", ask.Image)}
		}
		if !ask.Placing && lim.AllowedFlavors != nil && !contains(lim.AllowedFlavors, ask.Flavor) {
			return &QuotaError{Limit: "allowed_flavors", Message: Reasonf("your quota does not allow the flavor %q", ask.Flavor)}
		}
		// Column tags: gorm's naming would look for "gp_us" and scan 0.
		if lim.MinIdleMinutes != nil && ask.IdleTimeout < time.Duration(*lim.MinIdleMinutes)*time.Minute {
			return &QuotaError{Limit: "min_idle_minutes", Message: Reasonf("your quota needs an idle timeout of at least %d minutes", *lim.MinIdleMinutes)}
		}
		if lim.MaxIdleMinutes != nil && ask.IdleTimeout > time.Duration(*lim.MaxIdleMinutes)*time.Minute {
			return &QuotaError{Limit: "max_idle_minutes", Message: Reasonf("your quota allows an idle timeout of at most %d minutes", *lim.MaxIdleMinutes)}
		}
		if qe := BeyondQuota(lim, ask.GPUs, ask.GPUModel); qe != nil {
			return qe
		}
		// Home storage as last metered (no scan per launch): over the limit,
		// nothing with GPUs starts until the user frees space. A start
		// without GPU goes (its other limits still apply): the home is
		// one volume shared by all of the user's workbenches, so refusing
		// every start left no way to reach the files and delete them.
		if lim.MaxStorageGiB != nil && ask.GPUs > 0 {
			used, err := storageUsed(tx.tx, ask.UserID)
			if err != nil {
				return err
			}
			if StorageOver(lim, used) {
				way, cpu, err := storageWayOut(tx.tx, lim, ask)
				if err != nil {
					return err
				}
				return storageQuotaError(lim, used, way, cpu)
			}
		}
		var rows []struct {
			GPUModel string `gorm:"column:gpu_model"`
			GPUs     int    `gorm:"column:gpus"`
			Parts    int    `gorm:"column:parts"` // MIG instances and slices among GPUs
		}
		if err := tx.tx.Raw(`SELECT w.id, COALESCE(MAX(a.gpu_model), '') AS gpu_model, COUNT(a.gpu_uuid) AS gpus,
			COALESCE(SUM(a.kind != 'gpu'), 0) AS parts
			FROM workbenches w LEFT JOIN gpu_allocations a ON a.workbench_id = w.id
			WHERE w.owner_id = ? AND w.deleted_at IS NULL AND w.state IN ? GROUP BY w.id`, ask.UserID, ActiveStates).Scan(&rows).Error; err != nil {
			return err
		}
		gpus, perModel := ask.GPUs, map[string]int{ask.GPUModel: ask.GPUs}
		parts := ask.Kind != "" && ask.Kind != UnitGPU
		for _, r := range rows {
			gpus += r.GPUs
			perModel[r.GPUModel] += r.GPUs
			parts = parts || r.Parts > 0
		}
		if lim.MaxWorkbenches != nil && int64(len(rows)+1) > *lim.MaxWorkbenches {
			msg := Reasonf("quota exceeded: at most %d running workbenches (you have %d)", *lim.MaxWorkbenches, len(rows))
			if *lim.MaxWorkbenches == 1 {
				msg = Reasonf("quota exceeded: at most 1 running workbench (you have %d)", len(rows))
			}
			return &QuotaError{Limit: "max_workbenches", Message: msg, Final: *lim.MaxWorkbenches < 1}
		}
		if lim.MaxGPUs != nil && ask.GPUs > 0 && int64(gpus) > *lim.MaxGPUs {
			msg := Reasonf("quota exceeded: at most %d GPUs at once (you hold %d, this asks %d)", *lim.MaxGPUs, gpus-ask.GPUs, ask.GPUs)
			if *lim.MaxGPUs == 1 {
				msg = Reasonf("quota exceeded: at most 1 GPU at once (you hold %d, this asks %d)", gpus-ask.GPUs, ask.GPUs)
			}
			if parts {
				// "You hold 1 GPU" to someone holding a MIG instance read as
				// a miscount: the limit counts units of any kind
				// (docs/gpu-units.md).
				msg = Reasonf("quota exceeded: at most %d GPUs at once, each MIG instance or GPU slice counting as one (you hold %d, this asks %d)", *lim.MaxGPUs, gpus-ask.GPUs, ask.GPUs)
			}
			return &QuotaError{Limit: "max_gpus", Message: msg}
		}
		if n, ok := lim.MaxGPUsPerModel[ask.GPUModel]; ok && ask.GPUs > 0 && perModel[ask.GPUModel] > n {
			return &QuotaError{Limit: "max_gpus_per_model", Message: Reasonf("quota exceeded: at most %d × %s at once", n, ask.GPUModel)}
		}
		// GPU-hours bound GPU launches; the budget binds every launch.
		if ask.GPUs > 0 && lim.GPUHoursPerMonth != nil && month.GPUSeconds >= *lim.GPUHoursPerMonth*3600 {
			return &QuotaError{Limit: "gpu_hours_per_month", Message: Reasonf("quota exceeded: the monthly limit of %d GPU-hours is used up", *lim.GPUHoursPerMonth)}
		}
		// A run of whole GPUs is charged at least its minimum in GPU-seconds
		// too: a launch with 2 GPU-seconds left ran 48 ms, was stopped by the
		// limit, and was counted 60 (GPU-hours count whole GPUs only).
		if g := lim.GPUHoursPerMonth; g != nil && ask.GPUs > 0 && (ask.Kind == "" || ask.Kind == UnitGPU) && ask.MinChargeSecs > 0 &&
			month.GPUSeconds+int64(ask.GPUs)*ask.MinChargeSecs > *g*3600 {
			return &QuotaError{Limit: "gpu_hours_per_month", Message: Reasonf(
				"quota exceeded: %d GPU-seconds are left of your monthly %d GPU-hours, fewer than this launch's minimum of %d (every run is charged at least %d s)",
				*g*3600-month.GPUSeconds, *g, int64(ask.GPUs)*ask.MinChargeSecs, ask.MinChargeSecs)}
		}
		if lim.BudgetPerMonthMicros != nil && month.AmountMicros >= *lim.BudgetPerMonthMicros {
			return &QuotaError{Limit: "budget_per_month_micros", Message: BudgetUsedUp()}
		}
		if b := lim.BudgetPerMonthMicros; b != nil && ask.SetAsideMicros > 0 && month.AmountMicros+ask.SetAsideMicros+max(ask.MinChargeMicros, 1) > *b {
			left := *b - month.AmountMicros
			if ask.SetAsideMicros >= left {
				leftText, owed := refusalFigures(ask.Currency, left, ask.SetAsideMicros)
				return &QuotaError{Limit: "budget_per_month_micros", Message: Reasonf(
					"quota exceeded: your bookings would bill %s for their unused time this month (unused booked time is billed), all of the %s left of your monthly budget; launch on your booking, or release a booking you will not use",
					owed[0], leftText)}
			}
			leftText, owed := refusalFigures(ask.Currency, left, ask.SetAsideMicros, ask.MinChargeMicros)
			return &QuotaError{Limit: "budget_per_month_micros", Message: Reasonf(
				"quota exceeded: your bookings would bill %s for their unused time this month (unused booked time is billed), and the rest of the %s left of your monthly budget cannot cover this flavor's minimum charge of %s; launch on your booking, or release a booking you will not use",
				owed[0], leftText, owed[1])}
		}
		if b := lim.BudgetPerMonthMicros; b != nil && ask.MinChargeMicros > 0 && month.AmountMicros+ask.MinChargeMicros > *b {
			if step := pricing.MinorStep(ask.Currency); *b-month.AmountMicros < step && ask.MinChargeMicros >= step {
				// A sliver under a cent left reads as used up, as the
				// banner says it (budgetSpentForLaunches), with the sliver
				// written to the micro-unit, as the banner writes it too
				// (pricing.Micros.AtMost): "less than 0.01 USD is left"
				// here and "0.003 USD left" there told two stories.
				return &QuotaError{Limit: "budget_per_month_micros", Message: Reasonf(
					"quota exceeded: your monthly budget is used up (only %s is left; this flavor's minimum charge is %s)",
					moneyRounded(*b-month.AmountMicros, ask.Currency, false), moneyRounded(ask.MinChargeMicros, ask.Currency, true))}
			}
			left, owed := refusalFigures(ask.Currency, *b-month.AmountMicros, ask.MinChargeMicros)
			return &QuotaError{Limit: "budget_per_month_micros", Message: Reasonf(
				"quota exceeded: the %s left of your monthly budget cannot cover this flavor's minimum charge of %s (every run is charged at least %d s)",
				left, owed[0], ask.MinChargeSecs)}
		}
		return nil
	}
}

// MonthlyLimitReached returns why a user is at 100% of a monthly limit, or "".
func MonthlyLimitReached(lim Limits, u MonthUsage) string {
	if lim.GPUHoursPerMonth != nil && u.GPUSeconds >= *lim.GPUHoursPerMonth*3600 {
		return Reasonf("quota exceeded: the monthly limit of %d GPU-hours is used up", *lim.GPUHoursPerMonth)
	}
	if lim.BudgetPerMonthMicros != nil && u.AmountMicros >= *lim.BudgetPerMonthMicros {
		return BudgetUsedUp()
	}
	return ""
}

// refusalFigures writes the amounts one refusal compares: what is left
// and what is owed. In the currency's decimals, what is left rounded down
// (to the micro-unit for a sliver under a cent) and what is owed rounded
// up, so that the rounded figures compare as the amounts do. Where an amount owed is under
// the currency's smallest unit, every figure of the sentence is written to
// the micro-unit: rounded, "your bookings would bill 0.01 USD …, and the
// rest of the < 0.01 USD left … cannot cover this flavor's minimum charge
// of 0.01 USD" billed more than was left, and a minimum of 0.002 read five
// times as much.
func refusalFigures(currency string, left int64, owed ...int64) (string, []string) {
	exact := false
	for _, o := range owed {
		exact = exact || (o > 0 && o < pricing.MinorStep(currency))
	}
	out := make([]string, len(owed))
	for i, o := range owed {
		if exact {
			out[i] = moneyExact(o, currency)
		} else {
			out[i] = moneyRounded(o, currency, true)
		}
	}
	if exact {
		return moneyExact(left, currency), out
	}
	return moneyRounded(left, currency, false), out
}

// moneyRounded writes an amount compared against the budget by the
// pages' rule (pricing.Micros.AtMost, AtLeast): in the currency's decimals,
// what is left rounded down and what is owed rounded up, so that a refusal
// cannot read "0.28 left cannot cover 0.28"; a sliver under the smallest
// unit to the micro-unit ("0.003 USD", as the banner writes what is left).
func moneyRounded(micros int64, currency string, up bool) string {
	dec := pricing.Micros(micros).AtMost(currency)
	if up {
		dec = pricing.Micros(micros).AtLeast(currency)
	}
	if currency == "" {
		return dec
	}
	return dec + " " + currency
}

// BudgetUsedUp is the reason a spent monthly budget gives: one text for the
// launch refusal, the budget stop and the pages that compare against it.
func BudgetUsedUp() string { return Reasonf("quota exceeded: the monthly budget is used up") }

// MonthStart is the first instant of t's calendar month (UTC).
func MonthStart(t time.Time) time.Time {
	t = t.UTC()
	return time.Date(t.Year(), t.Month(), 1, 0, 0, 0, 0, time.UTC)
}

// UsersWithOpenIntervals lists users that hold resources now.
func (s *Store) UsersWithOpenIntervals(ctx context.Context) ([]int64, error) {
	var ids []int64
	err := s.db.WithContext(ctx).Model(&UsageInterval{}).Where("ended_at IS NULL").Distinct().Pluck("user_id", &ids).Error
	return ids, err
}

// moneyExact writes an amount to the micro-unit, with its currency when
// known: for sums under the currency's smallest unit.
func moneyExact(micros int64, currency string) string {
	if currency == "" {
		return pricing.FormatExact(micros)
	}
	return pricing.FormatExact(micros) + " " + currency
}
