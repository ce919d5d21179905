package handlers

import (
	"errors"
	"net/http"
	"strconv"
	"strings"

	"github.com/gin-gonic/gin"

	"workbench/models"
	"workbench/templates"
)

// addPriceTier stores a discount version of a tier with its audit row in
// the same transaction: the API (apiPriceTierAdd) and the prices page's
// form (adminPriceTierAdd) both add versions through it.
//
// A version that repeats the discount in force where it takes effect adds
// nothing (errTierUnchanged, *t set to that version): a POST retried after
// a lost answer, or the form sent twice, appended a duplicate version and
// audit row, as PUT /admin/prices no longer does (unchangedRate).
func (h *Handler) addPriceTier(c *gin.Context, t *models.PriceTier) error {
	if cur, ok := h.tierInForce(c, *t); ok && !cur.IsDefault && cur.DiscountPct == t.DiscountPct {
		*t = cur
		return errTierUnchanged
	}
	t.CreatedBy, t.IsDefault = currentUser(c).Username, false
	err := h.audited(c, func(tx *models.Store) (models.AuditRecord, error) {
		err := tx.AddPriceTier(c.Request.Context(), t)
		return auditRec("price_tier.add", t.Tier, nil, *t), err
	})
	if err == nil {
		h.wbs.BudgetsChanged() // preemptible runs' cost changes with the discount
	}
	return err
}

// errTierUnchanged: the discount asked is the one in force then.
var errTierUnchanged = errors.New("the discount is already in force")

// tierInForce is the version of t's tier in force where t takes effect
// (now when it names no time).
func (h *Handler) tierInForce(c *gin.Context, t models.PriceTier) (models.PriceTier, bool) {
	at := t.EffectiveFrom
	if at.IsZero() {
		at = h.wbs.Now()
	}
	list, err := h.store.PriceTierHistory(c.Request.Context()) // newest first
	if err != nil {
		return models.PriceTier{}, false
	}
	for _, v := range list {
		if v.Tier == strings.TrimSpace(t.Tier) && !v.EffectiveFrom.After(at) {
			return v, true
		}
	}
	return models.PriceTier{}, false
}

// adminPriceTierAdd: POST /admin/price-tiers, the "Price tiers" form of the
// prices page (admin, sudo; audited): a discount version from now or later.
// A bad field is shown beside it with the input kept.
func (h *Handler) adminPriceTierAdd(c *gin.Context) {
	form := templates.TierForm{Tier: strings.TrimSpace(c.PostForm("tier")),
		DiscountPct:   strings.TrimSpace(strings.TrimSuffix(strings.TrimSpace(c.PostForm("discount_percent")), "%")),
		EffectiveFrom: strings.TrimSpace(c.PostForm("effective_from")), Errors: templates.FormErrors{}}
	t := models.PriceTier{Tier: form.Tier}
	if pct, err := strconv.ParseInt(form.DiscountPct, 10, 64); err != nil {
		form.Errors["discount_percent"] = trc(c, "a whole number of percent between 0 and 100")
	} else {
		t.DiscountPct = pct
	}
	if form.EffectiveFrom != "" {
		at, err := parseDatetimeLocal(form.EffectiveFrom)
		if err != nil {
			form.Errors["effective_from"] = trc(c, "enter a date and time (UTC), or leave empty for now")
		} else {
			t.EffectiveFrom = at
		}
	}
	if len(form.Errors) == 0 {
		var ve *models.ValidationError
		if err := h.addPriceTier(c, &t); errors.Is(err, errTierUnchanged) {
			h.flash(c, trc(c, "The %s discount is already %s%%; nothing changed.", templates.TierName(c.Request.Context(), t.Tier), strconv.FormatInt(t.DiscountPct, 10)))
			h.seeOther(c, "/admin/prices#price-tiers")
			return
		} else if errors.As(err, &ve) {
			form.Errors[ve.Field] = ve.Message
		} else if err != nil {
			h.fail(c, err)
			return
		}
	}
	if len(form.Errors) > 0 {
		h.renderPricesPage(c, http.StatusBadRequest, templates.PriceForm{}, form)
		return
	}
	h.flash(c, trc(c, "The %s discount is set to %s%% from %s.", templates.TierName(c.Request.Context(), t.Tier),
		strconv.FormatInt(t.DiscountPct, 10), t.EffectiveFrom.UTC().Format("2006-01-02 15:04 UTC")))
	h.seeOther(c, "/admin/prices#price-tiers")
}
