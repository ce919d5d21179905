package handlers

import (
	"errors"
	"net/http"
	"slices"
	"sort"
	"strconv"
	"strings"
	"time"

	"github.com/gin-gonic/gin"

	"workbench/models"
	"workbench/models/pricing"
	"workbench/templates"
)

// datetimeLocal is the value format of <input type=datetime-local>.
const datetimeLocal = "2006-01-02T15:04"

// adminPricesPage: GET /admin/prices — rates in force, a form to add one
// and the full history.
func (h *Handler) adminPricesPage(c *gin.Context) {
	h.renderPrices(c, http.StatusOK, templates.PriceForm{})
}

// defaultPriceForm is the add-a-rate form as the page first shows it.
func (h *Handler) defaultPriceForm(c *gin.Context) templates.PriceForm {
	form := templates.PriceForm{Resource: pricing.GPU}
	if ms, err := h.pool.Models(c.Request.Context()); err == nil && len(ms) > 0 {
		form.GPUModel = ms[0]
	}
	return form
}

// adminPriceCreate: POST /admin/prices — adds a rate version.
func (h *Handler) adminPriceCreate(c *gin.Context) {
	form := templates.PriceForm{Resource: c.PostForm("resource"), GPUModel: strings.TrimSpace(c.PostForm("gpu_model")),
		Rate: strings.TrimSpace(c.PostForm("rate")), EffectiveFrom: strings.TrimSpace(c.PostForm("effective_from")),
		Errors: templates.FormErrors{}}
	pr := models.PriceRate{Resource: form.Resource, GPUModel: form.GPUModel, CreatedBy: currentUser(c).Username}
	var ve *models.ValidationError
	if m, err := parseMajorUnits("rate", form.Rate, rateAmount); errors.As(err, &ve) {
		form.Errors["rate"] = ve.Message
	} else {
		pr.Micros = m
	}
	if form.EffectiveFrom != "" {
		t, err := parseDatetimeLocal(form.EffectiveFrom)
		if err != nil {
			form.Errors["effective_from"] = trc(c, "enter a date and time (UTC), or leave empty for now")
		} else {
			pr.EffectiveFrom = t
		}
	}
	if len(form.Errors) == 0 {
		err := h.store.CheckRateModel(c.Request.Context(), pr)
		var before any
		if err == nil {
			before, err = h.rateReplaced(c.Request.Context(), pr)
		}
		if _, same := unchangedRate(before, pr); err == nil && same {
			h.flash(c, trc(c, "The rate for %s is already %s %s per %s; nothing changed.", rateWhat(c, pr), pricing.FormatRate(pr.Micros), h.cfg.Currency,
				trcMsg(c, resourceUnit(pr.Resource))))
			h.seeOther(c, "/admin/prices")
			return
		}
		if err == nil {
			err = h.audited(c, func(tx *models.Store) (models.AuditRecord, error) {
				err := tx.AddPriceRate(c.Request.Context(), &pr)
				return auditRec("price.set", pr.Key(), before, pr), err
			})
		}
		if errors.As(err, &ve) {
			form.Errors[ve.Field] = ve.Message
		} else if err != nil {
			h.fail(c, err)
			return
		}
	}
	if len(form.Errors) > 0 {
		h.renderPrices(c, http.StatusBadRequest, form)
		return
	}
	h.wbs.BudgetsChanged()
	h.flash(c, trc(c, "Rate for %s set to %s %s per %s from %s.", rateWhat(c, pr), pricing.FormatRate(pr.Micros), h.cfg.Currency,
		trcMsg(c, resourceUnit(pr.Resource)), pr.EffectiveFrom.UTC().Format("2006-01-02 15:04 UTC")))
	h.seeOther(c, "/admin/prices")
}

// rateWhat names a rate's resource (and GPU model) in the reader's language.
func rateWhat(c *gin.Context, pr models.PriceRate) string {
	what := templates.ResourceName(c.Request.Context(), pr.Resource)
	if pr.GPUModel != "" {
		what += " " + pr.GPUModel
	}
	return what
}

// parseDatetimeLocal reads a datetime-local value as UTC.
func parseDatetimeLocal(s string) (time.Time, error) {
	for _, layout := range []string{datetimeLocal, "2006-01-02T15:04:05", time.RFC3339} {
		if t, err := time.ParseInLocation(layout, s, time.UTC); err == nil {
			return t.UTC(), nil
		}
	}
	return time.Time{}, errors.New("bad time")
}

func (h *Handler) renderPrices(c *gin.Context, status int, form templates.PriceForm) {
	h.renderPricesPage(c, status, form, templates.TierForm{})
}

// renderPricesPage renders the prices page with both forms: the one not
// posted (Resource or Tier empty) shows its defaults.
func (h *Handler) renderPricesPage(c *gin.Context, status int, form templates.PriceForm, tform templates.TierForm) {
	ctx := c.Request.Context()
	if form.Resource == "" {
		form = h.defaultPriceForm(c)
	}
	if tform.Tier == "" {
		tform.Tier = pricing.TierPreemptible
	}
	form.Errors = trcErrs(c, form.Errors)
	tform.Errors = trcErrs(c, tform.Errors)
	now := time.Now().UTC()
	hist, err := h.store.PriceHistory(ctx)
	if err != nil {
		h.fail(c, err)
		return
	}
	cur, err := h.store.CurrentPrices(ctx, now)
	if err != nil {
		h.fail(c, err)
		return
	}
	poolModels, err := h.pool.Models(ctx)
	if err != nil {
		h.fail(c, err)
		return
	}
	v := templates.PricesView{Currency: h.cfg.Currency, Form: form, TierForm: tform, Now: now.Format(datetimeLocal),
		TierNames: []string{pricing.TierPreemptible}}
	discount, err := h.tierRows(c, &v, now)
	if err != nil {
		h.fail(c, err)
		return
	}
	seen := map[string]bool{}
	for _, m := range poolModels {
		if m != "" && !seen[m] {
			seen[m] = true
			v.GPUModels = append(v.GPUModels, m)
		}
	}
	next := map[string]models.PriceRate{} // earliest scheduled version per key
	// Versions of a key with the same effective time: the last entered
	// wins (the history is newest first, so the first seen); the others
	// never apply, and say so rather than "scheduled".
	winner := map[string]bool{}
	for _, r := range hist {
		if r.GPUModel != "" && !seen[r.GPUModel] {
			seen[r.GPUModel] = true
			v.GPUModels = append(v.GPUModels, r.GPUModel)
		}
		if r.EffectiveFrom.After(now) {
			if n, ok := next[r.Key()]; !ok || r.EffectiveFrom.Before(n.EffectiveFrom) {
				next[r.Key()] = r
			}
		}
		row := h.priceRow(c, r)
		slot := r.Key() + "@" + r.EffectiveFrom.UTC().Format(time.RFC3339Nano)
		row.Superseded = winner[slot]
		winner[slot] = true
		row.Scheduled = r.EffectiveFrom.After(now) && !row.Superseded
		row.InForce = cur[r.Key()].ID == r.ID
		v.History = append(v.History, row)
	}
	for _, r := range cur {
		row := h.priceRow(c, r)
		row.InForce = true
		if pct, ok := discount[pricing.TierPreemptible]; ok && pricing.IsUnit(r.Resource) {
			// as pricing.Discounted prices a preemptible unit-hour
			row.Preemptible = templates.MoneyRate(c.Request.Context(), r.Micros*(100-pct)/100, h.cfg.Currency) + " / " + trcMsg(c, resourceUnit(r.Resource))
		}
		if n, ok := next[r.Key()]; ok {
			row.Next = trc(c, "%s from %s", pricing.FormatRate(n.Micros), templates.When(&n.EffectiveFrom))
		}
		v.Current = append(v.Current, row)
	}
	for k, n := range next { // scheduled for a resource with no rate yet
		if _, ok := cur[k]; !ok {
			row := h.priceRow(c, n)
			row.Scheduled, row.Next = true, trc(c, "first rate, from %s", templates.When(&n.EffectiveFrom))
			row.Rate, row.EffectiveFrom = "—", "—"
			v.Current = append(v.Current, row)
		}
	}
	order := map[string]int{pricing.GPU: 0, pricing.CPU: 1, pricing.Memory: 2, pricing.Storage: 3}
	sort.Slice(v.Current, func(i, j int) bool {
		a, b := v.Current[i], v.Current[j]
		if order[a.Resource] != order[b.Resource] {
			return order[a.Resource] < order[b.Resource]
		}
		return a.GPUModel < b.GPUModel
	})
	h.render(c, status, templates.AdminPricesPage(h.page(c, trc(c, "Prices")), v))
}

func (h *Handler) priceRow(c *gin.Context, r models.PriceRate) templates.PriceRow {
	eff := templates.When(&r.EffectiveFrom)
	if r.EffectiveFrom.Unix() <= 0 {
		eff = trc(c, "always")
	}
	return templates.PriceRow{Resource: r.Resource, GPUModel: r.GPUModel, RateMicros: r.Micros,
		Rate:          templates.MoneyRate(c.Request.Context(), r.Micros, h.cfg.Currency) + " / " + trcMsg(c, resourceUnit(r.Resource)),
		EffectiveFrom: eff, IsDefault: r.IsDefault, CreatedBy: r.CreatedBy, CreatedAt: templates.When(&r.CreatedAt)}
}

// tierRows fills the page's "Price tiers" section: the discount in force
// per tier (with the next scheduled change) and every version, newest
// first. It returns the discount percent in force per tier.
func (h *Handler) tierRows(c *gin.Context, v *templates.PricesView, now time.Time) (map[string]int64, error) {
	hist, err := h.store.PriceTierHistory(c.Request.Context())
	if err != nil {
		return nil, err
	}
	cur := map[string]models.PriceTier{}  // newest version in force per tier
	next := map[string]models.PriceTier{} // earliest scheduled version per tier
	for _, t := range hist {
		if t.EffectiveFrom.After(now) {
			if n, ok := next[t.Tier]; !ok || t.EffectiveFrom.Before(n.EffectiveFrom) {
				next[t.Tier] = t
			}
		} else if _, ok := cur[t.Tier]; !ok { // history is newest first
			cur[t.Tier] = t
		}
	}
	row := func(t models.PriceTier) templates.TierRow {
		eff := templates.When(&t.EffectiveFrom)
		if t.EffectiveFrom.Unix() <= 0 {
			eff = trc(c, "always")
		}
		return templates.TierRow{Tier: t.Tier, DiscountPct: t.DiscountPct, EffectiveFrom: eff, IsDefault: t.IsDefault,
			CreatedBy: t.CreatedBy, CreatedAt: templates.When(&t.CreatedAt)}
	}
	for _, t := range hist {
		r := row(t)
		r.Scheduled = t.EffectiveFrom.After(now)
		r.InForce = cur[t.Tier].ID == t.ID
		v.TierHistory = append(v.TierHistory, r)
	}
	discount := map[string]int64{}
	tiers := append([]string{}, v.TierNames...)
	for _, t := range hist {
		if !slices.Contains(tiers, t.Tier) {
			tiers = append(tiers, t.Tier)
		}
	}
	for _, name := range tiers {
		t, inForce := cur[name]
		n, scheduled := next[name]
		if !inForce && !scheduled {
			continue
		}
		var r templates.TierRow
		if inForce {
			r = row(t)
			r.InForce = true
			discount[name] = t.DiscountPct
		} else {
			r = templates.TierRow{Tier: name, DiscountPct: -1, EffectiveFrom: "—"}
		}
		if scheduled {
			r.Next = trc(c, "%s%% from %s", strconv.FormatInt(n.DiscountPct, 10), templates.When(&n.EffectiveFrom))
		}
		v.Tiers = append(v.Tiers, r)
	}
	return discount, nil
}
