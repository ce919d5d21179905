package handlers

import (
	"context"
	"errors"
	"fmt"
	"maps"
	"net/http"
	"slices"
	"time"

	"github.com/gin-gonic/gin"

	"workbench/models"
)

// apiPrices: GET /api/v1/admin/prices — rates in force and the history.
func (h *Handler) apiPrices(c *gin.Context) {
	ctx := c.Request.Context()
	cur, err := h.store.CurrentPrices(ctx, time.Now())
	if err != nil {
		h.fail(c, err)
		return
	}
	hist, err := h.store.PriceHistory(ctx)
	if err != nil {
		h.fail(c, err)
		return
	}
	// In a fixed order (resource, then model): from the map they came in
	// a new order on every call, so a diff of two reads showed changes.
	current := make([]APIPriceRate, 0, len(cur))
	for _, key := range slices.Sorted(maps.Keys(cur)) {
		r := cur[key]
		current = append(current, apiPriceRate(&r))
	}
	c.JSON(http.StatusOK, APIPrices{Currency: h.cfg.Currency, Current: current, History: mapList(hist, apiPriceRate).Items})
}

// apiPricesPut: PUT /api/v1/admin/prices {"rates":[{resource, gpu_model,
// rate_micros, effective_from?}]} — adds new versions; nothing is changed
// in place, and an effective time in the past is refused.
func (h *Handler) apiPricesPut(c *gin.Context) {
	var body struct {
		Rates []struct {
			Resource      string     `json:"resource"`
			GPUModel      string     `json:"gpu_model"`
			RateMicros    *int64     `json:"rate_micros"`
			EffectiveFrom *time.Time `json:"effective_from"`
		} `json:"rates"`
	}
	if !h.bindJSON(c, &body) {
		return
	}
	if len(body.Rates) == 0 {
		h.fail(c, &models.ValidationError{Field: "rates", Message: "send at least one rate"})
		return
	}
	ctx := c.Request.Context()
	// Every rate is checked before the first is added: a bad third rate must
	// not leave the first two in force.
	var rates []models.PriceRate
	for i, r := range body.Rates {
		// A refusal names the entry it is about ("rates[1]: …"): the body
		// may carry many.
		at := func(err error) error {
			var ve *models.ValidationError
			if errors.As(err, &ve) {
				field, msg := ve.Field, ve.Message
				if field == "rate" { // the form's name; this body's field is rate_micros
					field, msg = "rate_micros", msg+" (rate_micros: 0 to 1000000000000)"
				}
				return &models.ValidationError{Field: field, Message: fmt.Sprintf("rates[%d]: %s", i, msg)}
			}
			return err
		}
		if r.RateMicros == nil {
			h.fail(c, at(&models.ValidationError{Field: "rate_micros", Message: "is required"}))
			return
		}
		pr := models.PriceRate{Resource: r.Resource, GPUModel: r.GPUModel, Micros: *r.RateMicros, CreatedBy: currentUser(c).Username}
		if r.EffectiveFrom != nil {
			pr.EffectiveFrom = r.EffectiveFrom.UTC()
		}
		check := pr
		if err := h.store.CheckRateModel(ctx, pr); err != nil {
			h.fail(c, at(err))
			return
		}
		if err := h.store.CheckPriceRate(ctx, &check); err != nil {
			h.fail(c, at(err))
			return
		}
		pr.GPUModel = check.GPUModel // normalised (a MIG profile in lower case)
		rates = append(rates, pr)
	}
	// Each rate commits with its audit row (a later one failing leaves the
	// earlier ones, as before).
	var added, unchanged []models.PriceRate
	for _, pr := range rates {
		before, err := h.rateReplaced(ctx, pr)
		if err != nil {
			h.fail(c, err)
			return
		}
		if cur, ok := unchangedRate(before, pr); ok {
			unchanged = append(unchanged, cur)
			continue
		}
		err = h.audited(c, func(tx *models.Store) (models.AuditRecord, error) {
			err := tx.AddPriceRate(ctx, &pr)
			return auditRec("price.set", pr.Key(), before, pr), err
		})
		if err != nil {
			h.fail(c, err)
			return
		}
		added = append(added, pr)
	}
	h.wbs.BudgetsChanged()
	c.JSON(http.StatusOK, APIPricesAdded{Added: mapList(added, apiPriceRate).Items, Unchanged: mapList(unchanged, apiPriceRate).Items})
}

// unchangedRate reports whether pr only repeats the rate in force where it
// takes effect (before, from rateReplaced), and returns that rate. A PUT
// retried after a lost answer, or a form sent twice, then adds no version
// and no audit row: the price list's history shows changes, not requests.
// A default rate is never unchanged: setting its value confirms it.
func unchangedRate(before any, pr models.PriceRate) (models.PriceRate, bool) {
	cur, ok := before.(models.PriceRate)
	return cur, ok && !cur.IsDefault && cur.Micros == pr.Micros
}

// rateReplaced is the rate pr takes over from — the one in force where pr
// takes effect (now when it sets no time) — for the audit's "before"; nil
// when the resource had none.
func (h *Handler) rateReplaced(ctx context.Context, pr models.PriceRate) (any, error) {
	at := pr.EffectiveFrom
	if at.IsZero() {
		at = time.Now()
	}
	cur, err := h.store.CurrentPrices(ctx, at)
	if err != nil {
		return nil, err
	}
	if r, ok := cur[pr.Key()]; ok {
		return r, nil
	}
	return nil, nil
}
