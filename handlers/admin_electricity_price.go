package handlers

import (
	"errors"
	"net/http"
	"strings"

	"github.com/gin-gonic/gin"

	"workbench/models"
	"workbench/models/pricing"
	"workbench/templates"
)

// The electricity price (SPEC §6 rule 11) turns measured energy into an
// informational cost on statements and is the TCO's default electricity
// price. It is a setting, not a rate: nothing is charged for energy, so it
// applies to every statement it is shown on, past months included.

// adminElectricityPriceForm: POST /admin/billing/electricity-price
// price=0.15 (major units per kWh; blank removes it).
func (h *Handler) adminElectricityPriceForm(c *gin.Context) {
	s := strings.TrimSpace(c.PostForm("price"))
	micros := int64(-1)
	if s != "" {
		m, err := parseMajorUnits("price", s, anyAmount)
		var ve *models.ValidationError
		if errors.As(err, &ve) {
			h.renderBillingWith(c, http.StatusBadRequest, templates.CorrectionForm{}, templates.ElectricityForm{Price: s, Error: ve.Message})
			return
		}
		micros = m
	}
	if !h.saveElectricityPrice(c, micros) {
		return
	}
	c.Redirect(http.StatusSeeOther, "/admin/billing?done=electricity")
}

// apiElectricityPrice: GET /api/v1/admin/electricity-price.
func (h *Handler) apiElectricityPrice(c *gin.Context) {
	p, ok, err := h.store.ElectricityPrice(c.Request.Context())
	if err != nil {
		h.fail(c, err)
		return
	}
	var v *int64
	if ok {
		v = &p
	}
	c.JSON(http.StatusOK, gin.H{"price_per_kwh_micros": v, "currency": h.cfg.Currency})
}

// apiElectricityPricePut: PUT /api/v1/admin/electricity-price
// {"price_per_kwh_micros": 150000} (null removes it).
func (h *Handler) apiElectricityPricePut(c *gin.Context) {
	var body struct {
		Price *int64 `json:"price_per_kwh_micros"`
	}
	if !h.bindJSON(c, &body) {
		return
	}
	micros := int64(-1)
	if body.Price != nil {
		if *body.Price < 0 || *body.Price > 100*int64(pricing.PerUnit) {
			h.fail(c, &models.ValidationError{Field: "price_per_kwh_micros", Message: "must be 0 to 100 units per kWh, in micro-units"})
			return
		}
		micros = *body.Price
	}
	if !h.saveElectricityPrice(c, micros) {
		return
	}
	h.apiElectricityPrice(c)
}

// saveElectricityPrice stores the price (negative: remove) and audits it.
func (h *Handler) saveElectricityPrice(c *gin.Context, micros int64) bool {
	ctx := c.Request.Context()
	if micros > 100*int64(pricing.PerUnit) {
		h.fail(c, &models.ValidationError{Field: "price", Message: "at most 100 per kWh"})
		return false
	}
	err := h.audited(c, func(tx *models.Store) (models.AuditRecord, error) {
		before, had, err := tx.ElectricityPrice(ctx)
		if err != nil {
			return models.AuditRecord{}, err
		}
		var b, a any
		if had {
			b = before
		}
		if micros >= 0 {
			a = micros
		}
		return auditRec("settings.electricity_price", models.SettingElectricityPrice, b, a), tx.SetElectricityPrice(ctx, micros)
	})
	if err != nil {
		h.fail(c, err)
		return false
	}
	return true
}
