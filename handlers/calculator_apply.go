package handlers

import (
	"errors"
	"net/url"
	"strings"
	"time"

	"github.com/gin-gonic/gin"

	"workbench/models"
	"workbench/models/pricing"
	"workbench/templates"
	"workbench/templates/i18n"
)

// applySuggestedRate recomputes the TCO of v on the server (the posted
// inputs, never a posted amount) and adds its suggested GPU rate (the owned
// cost less the CPU and memory share, see gpuRateSuggestion) as a new
// version of the GPU model's rate, effective now, recorded in the audit log.
// ask, when given, is asked with the rate about to be applied (the form's
// question without JavaScript); false answers errAskedFirst, nothing done.
func (h *Handler) applySuggestedRate(c *gin.Context, v url.Values, ask func(pr models.PriceRate) bool) (*models.PriceRate, pricing.FieldErrors, error) {
	// The defaults of an empty calculation are no reason to change a live
	// price: the request must say which GPU model (or flavor) it prices.
	if strings.TrimSpace(v.Get("gpu_model")) == "" && strings.TrimSpace(v.Get("flavor")) == "" {
		return nil, pricing.FieldErrors{"gpu_model": "is required: say which GPU model's rate to set (or a flavor)"}, nil
	}
	ctx := c.Request.Context()
	env, err := h.loadCalcEnv(ctx)
	if err != nil {
		return nil, nil, err
	}
	in, res, errs := h.runTCO(env, v)
	if errs != nil {
		return nil, errs, nil
	}
	model, why := env.applyModel(in.GPUModel)
	if model == "" {
		return nil, pricing.FieldErrors{"gpu_model": why}, nil
	}
	now := time.Now()
	sug, err := env.suggestGPURate(model, res.SuggestedRateMicros, now)
	if err != nil {
		return nil, nil, err
	}
	if sug.ShareCoversAllOwned {
		return nil, pricing.FieldErrors{"target_utilization": sug.coversAllText(env.lc, h.perGPUHour)}, nil
	}
	pr := models.PriceRate{Resource: pricing.GPU, GPUModel: model, Micros: sug.RateMicros, CreatedBy: currentUser(c).Username}
	if ask != nil && !ask(pr) {
		return nil, nil, errAskedFirst
	}
	before, err := h.rateReplaced(ctx, pr)
	if err != nil {
		return nil, nil, err
	}
	err = h.audited(c, func(tx *models.Store) (models.AuditRecord, error) {
		// Stored first: the record shows the rate as stored (its id and
		// effective time), not the request before AddPriceRate filled them.
		err := tx.AddPriceRate(ctx, &pr)
		return auditRec("price.set", pr.Key(), before, gin.H{"rate": pr, "from": "calculator TCO",
			"target_utilization": res.Target.Utilization, "owned_per_gpu_hour_micros": sug.OwnedMicros,
			"cpu_memory_share": gin.H{"flavor": sug.Flavor, "per_gpu_hour_micros": sug.ShareMicros}, "tco": in.Values().Encode()}), err
	})
	if err != nil {
		var ve *models.ValidationError
		if errors.As(err, &ve) {
			return nil, pricing.FieldErrors{"_": ve.Error()}, nil
		}
		return nil, nil, err
	}
	h.wbs.BudgetsChanged()
	return &pr, nil, nil
}

// errAskedFirst: the form's question was shown instead (askedFirst).
var errAskedFirst = errors.New("asked first")

// calculatorApplyRateForm: POST /admin/calculator/apply-rate (query = the
// TCO inputs) — the one-click "apply to the price list" of the calculator.
func (h *Handler) calculatorApplyRateForm(c *gin.Context) {
	q, err := url.ParseQuery(c.PostForm("query"))
	if err != nil {
		h.fail(c, newError(400, "invalid_query", "the calculation to apply is not a valid query string"))
		return
	}
	// Every charge from now on takes the new rate: asked without
	// JavaScript too, once the calculation is valid, with the rate it
	// gives (not one the form says).
	ctx := c.Request.Context()
	pr, errs, err := h.applySuggestedRate(c, q, func(pr models.PriceRate) bool {
		return h.askedFirst(c, templates.ConfirmView{Question: i18n.T(ctx, "Set the rate of %s to %s from now on?", models.ShortGPUName(pr.GPUModel), h.perGPUHour(ctx, pr.Micros)),
			Yes: i18n.T(ctx, "Apply"), Back: "/calculator?" + q.Encode() + "#tco"})
	})
	switch {
	case errors.Is(err, errAskedFirst):
		// The question page is the answer.
	case errs != nil:
		h.fail(c, newError(400, "invalid_"+errs.First(), errs.Error()))
	case err != nil:
		h.fail(c, err)
	default:
		h.flash(c, trc(c, "The rate of %s is now %s, effective %s (recorded in the audit log).", pr.GPUModel, h.perGPUHour(c.Request.Context(), pr.Micros),
			pr.EffectiveFrom.UTC().Format("2006-01-02 15:04 UTC")))
		h.seeOther(c, "/calculator?"+q.Encode()+"#tco")
	}
}
