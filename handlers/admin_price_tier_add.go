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
func (h *Handler) addPriceTier(c *gin.Context, t *models.PriceTier) error {
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
		if err := h.addPriceTier(c, &t); errors.As(err, &ve) {
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
	seeOther(c, "/admin/prices#price-tiers")
}
