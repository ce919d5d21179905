package handlers

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"net/url"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/gin-gonic/gin"

	"workbench/models"
	"workbench/orchestrator"
	"workbench/templates"
	"workbench/templates/i18n"
)

// adminQuotas: GET /admin/quotas — the quota console.
func (h *Handler) adminQuotas(c *gin.Context) {
	h.renderQuotas(c, http.StatusOK, nil, c.Query("q"))
}

// adminQuotaSave: POST /admin/quotas/{users|groups}/{name} — one row of
// the console.
func (h *Handler) adminQuotaSave(c *gin.Context) {
	scope, id, ok := h.quotaSubject(c)
	if !ok {
		return
	}
	h.saveQuotaForm(c, scope, id, c.Param("name"))
}

// adminDefaultQuotaSave: POST /admin/quotas/default.
func (h *Handler) adminDefaultQuotaSave(c *gin.Context) {
	h.saveQuotaForm(c, models.ScopeDefault, 0, "default")
}

func (h *Handler) saveQuotaForm(c *gin.Context, scope string, id int64, name string) {
	ctx := c.Request.Context()
	form, lim := parseQuotaForm(c, h.cfg.Currency)
	form.ID, form.Action = quotaFormID(scope, id), quotaAction(scope, name)
	if len(form.Errors) == 0 {
		// The per-model limits are not on the form: kept as they are.
		err := h.wbs.SetQuota(ctx, orchestrator.QuotaChange{Actor: currentUser(c).Username, Scope: scope, SubjectID: id, Name: name,
			Limits: lim, KeepPerModel: true, IfVersion: form.Version})
		var ve *models.ValidationError
		var ce *models.ConflictError
		switch {
		case errors.As(err, &ve):
			form.Errors[quotaField(ve.Field)] = ve.Message
		case errors.As(err, &ce):
			// The admin's values come back with the stored quota's
			// version: saving again is a deliberate overwrite.
			form.Errors["_"] = ce.Message
			stored, _, err := h.store.Quota(ctx, scope, id)
			if err != nil {
				h.fail(c, err)
				return
			}
			form.Version = stored.Version()
			if theirs := quotaConflictDetail(c, h.quotaFormOf(stored, nil), h.quotaFormOf(lim, nil), h.cfg.Currency); theirs != "" {
				form.Errors["_theirs"] = theirs
			}
		case err != nil:
			h.fail(c, err)
			return
		}
	}
	// A user's row with an error is shown by searching for its name: the
	// console pages its users, and page 1 need not hold this one.
	search := ""
	if scope == models.ScopeUser {
		search = name
	}
	if len(form.Errors) > 0 {
		status := http.StatusBadRequest
		if _, changed := form.Errors["_"]; changed {
			status = http.StatusConflict
		}
		h.renderQuotas(c, status, &form, search)
		return
	}
	if scope == models.ScopeDefault {
		h.flash(c, trc(c, "Default quota saved."))
	} else {
		h.flash(c, trc(c, "Quota of %s %s saved.", templates.QuotaScopeName(c.Request.Context(), scope), name))
	}
	h.seeOther(c, quotaConsoleBack(c, search)+"#"+form.ID)
}

// quotaConsoleBack is where a saved row returns: the view its form was
// posted from (the filter and page in its "back" field), so the admin
// keeps their place; a post without the field (an older page, a script)
// goes to a search for the row's own name, where it is sure to be.
func quotaConsoleBack(c *gin.Context, search string) string {
	back, sent := c.GetPostForm("back")
	if !sent {
		if search == "" {
			return "/admin/quotas"
		}
		return "/admin/quotas?q=" + url.QueryEscape(search)
	}
	from, _ := url.ParseQuery(back)
	q := url.Values{}
	if s := strings.TrimSpace(from.Get("q")); s != "" {
		q.Set("q", s)
	}
	if n, err := strconv.Atoi(from.Get("page")); err == nil && n > 1 {
		q.Set("page", strconv.Itoa(n))
	}
	if len(q) == 0 {
		return "/admin/quotas"
	}
	return "/admin/quotas?" + q.Encode()
}

// quotaConflictDetail names the fields where the quota saved meanwhile
// differs from the admin's (both as quotaFormOf writes them, so "100.00"
// typed is the same as 100 saved), with the saved values ("GPUs at once = 4"),
// so they see what the other admin changed before overwriting it; "" when
// the values are the same.
func quotaConflictDetail(c *gin.Context, saved, mine templates.QuotaForm, currency string) string {
	fields := []struct {
		label         string
		saved, posted string
	}{
		{trc(c, "GPUs at once"), saved.MaxGPUs, mine.MaxGPUs},
		{trc(c, "Workbenches"), saved.MaxWorkbenches, mine.MaxWorkbenches},
		{trc(c, "GPU-hours / month"), saved.GPUHoursPerMonth, mine.GPUHoursPerMonth},
		{trc(c, "Budget / month (%s)", currency), saved.Budget, mine.Budget},
		{trc(c, "Max runtime (h)"), saved.MaxRuntimeHours, mine.MaxRuntimeHours},
		{trc(c, "Idle timeout ≥ (min)"), saved.MinIdleMinutes, mine.MinIdleMinutes},
		{trc(c, "Idle timeout ≤ (min)"), saved.MaxIdleMinutes, mine.MaxIdleMinutes},
		{trc(c, "Home storage (GiB)"), saved.MaxStorageGiB, mine.MaxStorageGiB},
		{trc(c, "Images (comma-separated)"), saved.AllowedImages, mine.AllowedImages},
		{trc(c, "Flavors (comma-separated)"), saved.AllowedFlavors, mine.AllowedFlavors},
	}
	var parts []string
	for _, f := range fields {
		if strings.TrimSpace(f.saved) == strings.TrimSpace(f.posted) {
			continue
		}
		v := f.saved
		if v == "" {
			v = trc(c, "(empty)")
		}
		parts = append(parts, f.label+" = "+v)
	}
	if len(parts) == 0 {
		return ""
	}
	return trc(c, "Saved values that differ from yours: %s.", strings.Join(parts, "; "))
}

// quotaField maps a model's field name to the console's.
func quotaField(f string) string {
	switch f {
	case "budget_per_month_micros":
		return "budget"
	case "max_gpus_per_model":
		return "max_gpus"
	}
	return f
}

// quotaTooLarge refuses a whole-number limit past models.MaxQuotaNumber,
// naming the bound as the other fields' messages name theirs ("is too
// large" alone left the admin guessing).
const quotaTooLarge = "is too large (at most 1,000,000,000; leave empty to inherit)"

// parseQuotaForm reads the console's fields: empty means inherit (or, on
// the default, unlimited / all).
func parseQuotaForm(c *gin.Context, currency string) (templates.QuotaForm, models.Limits) {
	f := templates.QuotaForm{Errors: templates.FormErrors{}}
	var l models.Limits
	// whole reads a whole-number field of at least min (a runtime or idle
	// limit of 0 would mean nothing sensible: empty says "inherit").
	whole := func(field string, dst **int64, min int64) string {
		s := strings.TrimSpace(c.PostForm(field))
		if s == "" {
			return s
		}
		tooSmall := "must be 0 or more (leave empty to inherit)"
		if min == 1 {
			tooSmall = "must be at least 1 (leave empty to inherit)"
		}
		n, err := strconv.ParseInt(s, 10, 64)
		switch {
		case err != nil && strings.HasPrefix(s, "-"):
			f.Errors[field] = tooSmall
		case err != nil && isDigits(s):
			f.Errors[field] = quotaTooLarge
		case err != nil:
			f.Errors[field] = "enter a whole number, or leave empty to inherit"
		case n < min:
			f.Errors[field] = tooSmall
		case n > models.MaxQuotaNumber:
			f.Errors[field] = quotaTooLarge
		default:
			*dst = &n
		}
		return s
	}
	f.MaxGPUs = whole("max_gpus", &l.MaxGPUs, 0)
	f.MaxWorkbenches = whole("max_workbenches", &l.MaxWorkbenches, 0)
	f.GPUHoursPerMonth = whole("gpu_hours_per_month", &l.GPUHoursPerMonth, 0)
	f.MaxRuntimeHours = whole("max_runtime_hours", &l.MaxRuntimeHours, 1)
	f.MinIdleMinutes = whole("min_idle_minutes", &l.MinIdleMinutes, 0)
	f.MaxIdleMinutes = whole("max_idle_minutes", &l.MaxIdleMinutes, 1)
	f.MaxStorageGiB = whole("max_storage_gib", &l.MaxStorageGiB, 0)
	f.Budget = strings.TrimSpace(c.PostForm("budget"))
	if f.Budget != "" {
		if m, err := parseCurrencyAmount("budget", f.Budget, currency, budgetAmount); err != nil {
			var ve *models.ValidationError
			errors.As(err, &ve)
			f.Errors["budget"] = ve.Message
		} else {
			l.BudgetPerMonthMicros = &m
		}
	}
	f.Version = c.PostForm("version")
	f.AllowedImages, l.AllowedImages = listField(c.PostForm("allowed_images"))
	f.AllowedFlavors, l.AllowedFlavors = listField(c.PostForm("allowed_flavors"))
	return f, l
}

func isDigits(s string) bool {
	for _, r := range s {
		if r < '0' || r > '9' {
			return false
		}
	}
	return s != ""
}

// listField splits a comma-separated list; an empty one is nil (all allowed).
func listField(s string) (string, []string) {
	var out []string
	seen := map[string]bool{}
	for _, x := range strings.Split(s, ",") {
		if x = strings.TrimSpace(x); x != "" && !seen[x] {
			seen[x] = true
			out = append(out, x)
		}
	}
	return strings.TrimSpace(s), out
}

func quotaFormID(scope string, id int64) string {
	if scope == models.ScopeDefault {
		return "quota-default"
	}
	return fmt.Sprintf("quota-%s-%d", scope, id)
}

func quotaAction(scope, name string) string {
	switch scope {
	case models.ScopeUser:
		return "/admin/quotas/users/" + url.PathEscape(name)
	case models.ScopeGroup:
		return "/admin/quotas/groups/" + url.PathEscape(name)
	}
	return "/admin/quotas/default"
}

// renderQuotas builds the console: the default and the groups whose name
// matches search on the first page, then one page of the users who match
// (username, name or email), so a portal with thousands of users renders a
// page's worth of rows with a fixed number of statements. override, when
// given, replaces the row with its id by the submitted values and errors.
func (h *Handler) renderQuotas(c *gin.Context, status int, override *templates.QuotaForm, search string) {
	ctx := c.Request.Context()
	search = strings.TrimSpace(search)
	users, pages, err := pageOf(c, "/admin/quotas", func(offset, limit int) ([]models.User, int64, error) {
		return h.store.UserPage(ctx, search, false, offset, limit)
	})
	if err != nil {
		h.fail(c, err)
		return
	}
	def, _, err := h.store.Quota(ctx, models.ScopeDefault, 0)
	if err != nil {
		h.fail(c, err)
		return
	}
	groups, err := h.store.ListGroups(ctx)
	if err != nil {
		h.fail(c, err)
		return
	}
	groupIDs := make([]int64, 0, len(groups))
	for _, g := range groups {
		groupIDs = append(groupIDs, g.ID)
	}
	groupLimits, err := h.store.QuotasOf(ctx, models.ScopeGroup, groupIDs) // groups with a quota of their own
	if err != nil {
		h.fail(c, err)
		return
	}
	userIDs := make([]int64, 0, len(users))
	for _, u := range users {
		userIDs = append(userIDs, u.ID)
	}
	userLimits, err := h.store.QuotasOf(ctx, models.ScopeUser, userIDs)
	if err != nil {
		h.fail(c, err)
		return
	}
	// Home storage as last measured, for the page's users in one read.
	stored, err := h.store.StorageUsedOf(ctx, userIDs)
	if err != nil {
		h.fail(c, err)
		return
	}
	usage, err := h.monthUsageByUser(c, users)
	if err != nil {
		h.fail(c, err)
		return
	}
	gpusInUse, byModel, err := h.gpusInUseByUser(c)
	if err != nil {
		h.fail(c, err)
		return
	}

	v := templates.QuotaConsoleView{Currency: h.cfg.Currency, Search: search, Pages: pages}
	back := url.Values{}
	if search != "" {
		back.Set("q", search)
	}
	if pages.Page > 1 {
		back.Set("page", strconv.Itoa(pages.Page))
	}
	v.Back = back.Encode()
	lc := c.Request.Context()
	if pages.Page == 1 {
		if search == "" {
			defRow := templates.QuotaRow{Scope: models.ScopeDefault, Name: "default", Detail: trc(c, "applies where no group or user sets a value"),
				Form: h.quotaFormOf(def, limitsHints(lc, models.Limits{}, "", h.cfg.Currency))}
			defRow.Form.ID, defRow.Form.Action = quotaFormID(models.ScopeDefault, 0), quotaAction(models.ScopeDefault, "")
			v.Rows = append(v.Rows, defRow)
		}
		for _, g := range groups {
			if search != "" && !strings.Contains(strings.ToLower(g.Name), strings.ToLower(search)) {
				continue
			}
			row := templates.QuotaRow{Scope: models.ScopeGroup, Name: g.Name, Detail: trc(c, "%d members", len(g.Members)),
				Form: h.quotaFormOf(groupLimits[g.ID], limitsHints(lc, def, trc(c, "default: "), h.cfg.Currency))}
			row.Form.ID, row.Form.Action = quotaFormID(models.ScopeGroup, g.ID), quotaAction(models.ScopeGroup, g.Name)
			v.Rows = append(v.Rows, row)
		}
	}
	memberOf := map[string][]string{}
	limitsOfGroup := map[string]models.Limits{}
	for _, g := range groups {
		if l, ok := groupLimits[g.ID]; ok {
			limitsOfGroup[g.Name] = l
		}
		for _, m := range g.Members {
			memberOf[m] = append(memberOf[m], g.Name)
		}
	}

	for _, u := range users {
		own, set := userLimits[u.ID]
		var gl []models.Limits
		for _, g := range memberOf[u.Username] {
			if l, ok := limitsOfGroup[g]; ok {
				gl = append(gl, l)
			}
		}
		inherited := models.ResolveLimits(def, gl, nil)
		eff := inherited
		if set {
			eff = models.ResolveLimits(def, gl, &own)
		}
		detail := trc(c, "no group")
		if gs := memberOf[u.Username]; len(gs) > 0 {
			detail = trc(c, "groups: %s", strings.Join(gs, ", "))
		}
		m := usage[u.ID]
		row := templates.QuotaRow{Scope: models.ScopeUser, Name: u.Username, Detail: detail, Disabled: u.Disabled,
			Bars: []templates.QuotaBar{
				quotaBar("gpus", trc(c, "GPUs in use"), int64(gpusInUse[u.ID]), eff.MaxGPUs, countText),
				quotaBar("gpu-hours", trc(c, "GPU-hours"), m.GPUSeconds, hoursToSeconds(eff.GPUHoursPerMonth), gpuHoursText),
				quotaBar("spend", trc(c, "Spend"), m.AmountMicros, eff.BudgetPerMonthMicros,
					// As the user's own banner and usage page write it.
					h.spentOf(ctx, eff.BudgetPerMonthMicros)),
			},
			Form: h.quotaFormOf(own, limitsHints(lc, inherited, trc(c, "inherit: "), h.cfg.Currency))}
		// Per-model caps (set through the API) after "GPUs in use".
		row.Bars = slices.Insert(row.Bars, 1, perModelBars(lc, eff, byModel[u.ID])...)
		// Home storage last, as on the user's own usage page; over the
		// limit (more than it: one exactly at it may still launch) is
		// marked, since their launches and starts with GPUs are refused.
		row.Bars = append(row.Bars, quotaBar("storage", trc(c, "Home storage (GiB)"), stored[u.ID], gibToMilli(eff.MaxStorageGiB), models.GiBText))
		if row.StorageOver = models.StorageOver(eff, stored[u.ID]); row.StorageOver {
			row.Bars[len(row.Bars)-1].Note = trc(c, "Over the limit, as last measured: their launches and starts with GPUs are refused until they delete files or a workbench's data; workbenches without GPU still start, so they can.")
		}
		row.Form.ID, row.Form.Action = quotaFormID(models.ScopeUser, u.ID), quotaAction(models.ScopeUser, u.Username)
		v.Rows = append(v.Rows, row)
	}

	if override != nil {
		for i := range v.Rows {
			if v.Rows[i].Form.ID == override.ID {
				o := *override
				o.Inherited = v.Rows[i].Form.Inherited
				o.Errors = trcErrs(c, o.Errors)
				v.Rows[i].Form = o
			}
		}
	}
	h.render(c, status, templates.AdminQuotasPage(h.page(c, trc(c, "Quotas")), v))
}

// quotaFormOf fills a console form with stored limits.
func (h *Handler) quotaFormOf(l models.Limits, hints map[string]string) templates.QuotaForm {
	num := func(p *int64) string {
		if p == nil {
			return ""
		}
		return strconv.FormatInt(*p, 10)
	}
	f := templates.QuotaForm{MaxGPUs: num(l.MaxGPUs), MaxWorkbenches: num(l.MaxWorkbenches), GPUHoursPerMonth: num(l.GPUHoursPerMonth),
		MaxRuntimeHours: num(l.MaxRuntimeHours), MinIdleMinutes: num(l.MinIdleMinutes), MaxIdleMinutes: num(l.MaxIdleMinutes),
		MaxStorageGiB: num(l.MaxStorageGiB), AllowedImages: strings.Join(l.AllowedImages, ", "),
		AllowedFlavors: strings.Join(l.AllowedFlavors, ", "), Inherited: hints, Version: l.Version()}
	if l.BudgetPerMonthMicros != nil {
		f.Budget = plainAmount(*l.BudgetPerMonthMicros)
	}
	return f
}

// limitsHints are the placeholders of empty fields: what they fall back to.
func limitsHints(lc context.Context, l models.Limits, prefix, currency string) map[string]string {
	num := func(p *int64) string {
		if p == nil {
			return prefix + i18n.T(lc, "unlimited")
		}
		return prefix + strconv.FormatInt(*p, 10)
	}
	list := func(xs []string) string {
		if xs == nil {
			return prefix + i18n.T(lc, "all")
		}
		if len(xs) == 0 {
			return prefix + i18n.T(lc, "none")
		}
		return prefix + strings.Join(xs, ", ")
	}
	budget := prefix + i18n.T(lc, "unlimited")
	if l.BudgetPerMonthMicros != nil {
		budget = prefix + plainAmount(*l.BudgetPerMonthMicros)
	}
	return map[string]string{"max_gpus": num(l.MaxGPUs), "max_workbenches": num(l.MaxWorkbenches),
		"gpu_hours_per_month": num(l.GPUHoursPerMonth), "budget": budget, "max_runtime_hours": num(l.MaxRuntimeHours),
		"min_idle_minutes": num(l.MinIdleMinutes), "max_idle_minutes": num(l.MaxIdleMinutes), "max_storage_gib": num(l.MaxStorageGiB),
		"allowed_images": list(l.AllowedImages), "allowed_flavors": list(l.AllowedFlavors)}
}

// monthUsageByUser is each user's use of the current month: the ledger
// (one query for everyone) plus what is not in it yet.
func (h *Handler) monthUsageByUser(c *gin.Context, users []models.User) (map[int64]models.MonthUsage, error) {
	ctx := c.Request.Context()
	start := models.MonthStart(time.Now())
	items, _, err := h.store.UsageSummary(ctx, start, start.AddDate(0, 1, 0), "user", 0)
	if err != nil {
		return nil, err
	}
	byName := make(map[string]models.UsageItem, len(items))
	for _, it := range items {
		byName[it.Key] = it
	}
	out := make(map[int64]models.MonthUsage, len(users))
	for _, u := range users {
		it := byName[u.Username]
		out[u.ID] = models.MonthUsage{GPUSeconds: it.GPUSeconds, AmountMicros: it.AmountMicros}
	}
	// What is not billed yet — running compute and home storage — as the
	// budget counts it, read once for everyone.
	accruing, err := h.wbs.Billing().AccruingByUser(ctx)
	if err != nil {
		return nil, err
	}
	for _, u := range users {
		m, live := out[u.ID], accruing[u.ID]
		m.GPUSeconds += live.GPUSeconds
		m.AmountMicros += live.AmountMicros
		out[u.ID] = m
	}
	return out, nil
}

// gpusInUseByUser counts the GPUs bound to each user's active workbenches,
// in all and per GPU model.
func (h *Handler) gpusInUseByUser(c *gin.Context) (map[int64]int, map[int64]map[string]int, error) {
	wbs, err := h.store.ListWorkbenches(c.Request.Context(), 0, models.ActiveStates...)
	if err != nil {
		return nil, nil, err
	}
	out := map[int64]int{}
	for _, w := range wbs {
		out[w.OwnerID] += len(w.GPUs)
	}
	byModel, err := h.gpusInUseByModel(c.Request.Context(), wbs)
	return out, byModel, err
}
