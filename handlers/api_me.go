package handlers

import (
	"context"
	"net/http"

	"github.com/gin-gonic/gin"

	"workbench/models"
	"workbench/orchestrator"
)

// quotaStatus is a user's quota with what they use of it.
type quotaStatus struct {
	Quota     models.Limits `json:"quota"`
	GPUsInUse int           `json:"gpus_in_use"`
	// GPUsInUseByModel counts GPUs per model (what a per-model cap,
	// quota.max_gpus_per_model, is checked against).
	GPUsInUseByModel map[string]int `json:"gpus_in_use_by_model"`
	Workbenches      int            `json:"active_workbenches"`
	MonthGPUSecs     int64          `json:"month_gpu_seconds"`
	MonthSpend       int64          `json:"month_spend_micros"`
	MonthCredit      int64          `json:"month_credit_micros"` // the credits in MonthSpend (zero or less)
	Warnings         []string       `json:"warnings"`
	LimitReached     string         `json:"limit_reached,omitempty"`
	WarnAtFraction   float64        `json:"warn_at_fraction"`
	// BookingSetAside is what the user's bookings hold back of the
	// month's budget for their unused time (launches off them must fit
	// beside it; zero without a budget or while unused time is not billed).
	BookingSetAside int64 `json:"booking_set_aside_micros"`
	// StorageUsed is what the home volumes held at their last metering
	// (milli-GiB), checked against quota.max_storage_gib; StorageOver
	// says it is more (launches and starts with GPUs are refused).
	StorageUsed int64 `json:"storage_used_milli_gib"`
	StorageOver bool  `json:"storage_over"`
	// MonthAccruing is the part of MonthSpend not yet in the ledger
	// (the statement's "pending"; read once, with the spend).
	MonthAccruing int64 `json:"-"`
}

// bookingsTakeTheBudget warns that what the user's bookings set aside
// takes what is left of the monthly budget (launches off them are refused).
const bookingsTakeTheBudget = "Your bookings' unused time takes what is left of your monthly budget: only launches on your bookings can start."

// warnFraction is where a monthly limit starts to warn (SPEC §6: 80%).
const warnFraction = 0.8

// quotaStatusOf computes a user's quota and usage, with 80% warnings.
func (h *Handler) quotaStatusOf(c *gin.Context, u *models.User) (quotaStatus, error) {
	return h.quotaStatusIn(c.Request.Context(), u)
}

// quotaStatusIn is quotaStatusOf off gin (the not-running page under /wb/).
func (h *Handler) quotaStatusIn(ctx context.Context, u *models.User) (quotaStatus, error) {
	lim, err := h.store.EffectiveQuota(ctx, u.ID)
	if err != nil {
		return quotaStatus{}, err
	}
	month, err := h.wbs.Billing().MonthUsage(ctx, u.ID)
	if err != nil {
		return quotaStatus{}, err
	}
	active, err := h.store.ListWorkbenches(ctx, u.ID, models.ActiveStates...)
	if err != nil {
		return quotaStatus{}, err
	}
	st := quotaStatus{Quota: lim, Workbenches: len(active), MonthGPUSecs: month.GPUSeconds, MonthSpend: month.AmountMicros,
		MonthCredit: month.CreditMicros, MonthAccruing: month.AccruingMicros, Warnings: []string{}, WarnAtFraction: warnFraction}
	for _, w := range active {
		st.GPUsInUse += len(w.GPUs)
	}
	byModel, err := h.gpusInUseByModel(ctx, active)
	if err != nil {
		return quotaStatus{}, err
	}
	if st.StorageUsed, err = h.store.StorageUsedMilliGiB(ctx, u.ID); err != nil {
		return quotaStatus{}, err
	}
	st.StorageOver = models.StorageOver(lim, st.StorageUsed)
	st.GPUsInUseByModel = byModel[u.ID]
	if st.GPUsInUseByModel == nil {
		st.GPUsInUseByModel = map[string]int{}
	}
	if lim.BudgetPerMonthMicros != nil {
		if st.BookingSetAside, err = h.wbs.BookingSetAside(ctx, u.ID); err != nil {
			return quotaStatus{}, err
		}
	}
	st.LimitReached = models.MonthlyLimitReached(lim, month)
	if st.LimitReached == "" {
		if st.LimitReached, err = h.budgetSpentForLaunches(ctx, lim, month); err != nil {
			return quotaStatus{}, err
		}
	}
	// 80% up to the limit; at the limit LimitReached says it (both read as
	// "used up" and "80% or more" at once).
	if l := lim.GPUHoursPerMonth; l != nil && *l > 0 && float64(month.GPUSeconds) >= warnFraction*float64(*l*3600) && month.GPUSeconds < *l*3600 {
		st.Warnings = append(st.Warnings, "You have used 80% or more of your monthly GPU-hours.")
	}
	if l := lim.BudgetPerMonthMicros; l != nil && st.LimitReached == "" && st.BookingSetAside > 0 && month.AmountMicros+st.BookingSetAside >= *l {
		st.Warnings = append(st.Warnings, bookingsTakeTheBudget)
	}
	if l := lim.BudgetPerMonthMicros; l != nil && *l > 0 && float64(month.AmountMicros) >= warnFraction*float64(*l) && month.AmountMicros < *l && st.LimitReached == "" {
		st.Warnings = append(st.Warnings, "You have spent 80% or more of your monthly budget.")
	}
	return st, nil
}

// budgetSpentForLaunches says the budget is used up when what is left of
// it covers no flavor's minimum charge: every launch is refused then, and
// the budget stop ("the monthly budget is used up") leaves less than a
// second's worth, so a user whose workbench it stopped read only "80% or
// more (99%)". Looked at only past the warning line, where it is rare.
func (h *Handler) budgetSpentForLaunches(ctx context.Context, lim models.Limits, month models.MonthUsage) (string, error) {
	b := lim.BudgetPerMonthMicros
	if b == nil || *b <= 0 || float64(month.AmountMicros) < warnFraction*float64(*b) {
		return "", nil
	}
	fls, err := h.store.ListFlavors(ctx, true)
	if err != nil {
		return "", err
	}
	left := *b - month.AmountMicros
	for i := range fls {
		if quotaRulesOut(lim, fls[i]) != "" {
			continue
		}
		least, _, err := h.wbs.Billing().MinimumCharge(ctx, orchestrator.FlavorShape(&fls[i]))
		if err != nil {
			return "", err
		}
		if least <= left {
			return "", nil // this flavor can still start
		}
	}
	return models.BudgetUsedUp(), nil
}

// apiMe: GET /api/v1/me — the user, their groups, quota and usage.
func (h *Handler) apiMe(c *gin.Context) {
	h.writeMe(c, currentUser(c))
}

// writeMe answers the APIMe of u.
func (h *Handler) writeMe(c *gin.Context, u *models.User) {
	groups, err := h.store.UserGroups(c.Request.Context(), u.ID)
	if err != nil {
		h.fail(c, err)
		return
	}
	st, err := h.quotaStatusOf(c, u)
	if err != nil {
		h.fail(c, err)
		return
	}
	c.JSON(http.StatusOK, APIMe{ID: u.ID, Username: u.Username, DisplayName: u.DisplayName, Email: u.Email,
		Role: u.Role, Groups: nonNil(groups), Currency: h.cfg.Currency, Quota: st.Quota, Usage: st, EmailWorkbenchNotices: u.EmailWorkbenchNotices,
		TimeZone: u.TimeZone})
}

// apiGPUs: GET /api/v1/gpus — the pool with the SPEC §8 shape.
func (h *Handler) apiGPUs(c *gin.Context) {
	gpus, err := h.pool.List(c.Request.Context())
	if err != nil {
		h.fail(c, err)
		return
	}
	// Users see which GPUs are in use, and by which workbench only for
	// their own (docs/ux-choices.md: a user sees only their workbenches);
	// admins see every holder.
	var mine map[string]bool
	if u := currentUser(c); !u.IsAdmin() {
		own, err := h.store.ListWorkbenches(c.Request.Context(), u.ID)
		if err != nil {
			h.fail(c, err)
			return
		}
		mine = make(map[string]bool, len(own))
		for _, w := range own {
			mine[w.ID] = true
		}
	}
	items := make([]APIGPU, 0, len(gpus))
	for _, g := range gpus {
		a := apiGPU(g)
		if mine != nil {
			a = a.holdersOnly(mine)
		}
		items = append(items, a)
	}
	c.JSON(http.StatusOK, APIGPUList{Items: items, Simulated: h.pool.Simulated(), Backend: h.pool.Backend(), Status: h.pool.Status()})
}
