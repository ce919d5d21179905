package handlers

import (
	"bytes"
	"encoding/json"
	"net/http"
	"net/url"
	"slices"
	"strings"
	"time"

	"github.com/gin-gonic/gin"

	"workbench/models"

	"workbench/models/pricing"
)

// calcJSONValues turns a flat JSON object into query values, so that the API
// and the page share one parser (and one fuzz target): numbers keep their
// literal text (no float rounding), strings their value; anything else is
// an error on that field.
func calcJSONValues(body map[string]json.RawMessage) (url.Values, pricing.FieldErrors) {
	v := url.Values{}
	errs := pricing.FieldErrors{}
	for k, raw := range body {
		t := bytes.TrimSpace(raw)
		switch {
		case len(t) == 0 || string(t) == "null":
		case t[0] == '"':
			var s string
			if err := json.Unmarshal(t, &s); err != nil {
				errs[k] = "is not a valid string"
				continue
			}
			v.Set(k, s)
		case t[0] == '-' || (t[0] >= '0' && t[0] <= '9'):
			v.Set(k, string(t))
		case k == "use_measured" && (string(t) == "true" || string(t) == "false"):
			v.Set(k, string(t))
		default:
			errs[k] = "must be a number or a string"
		}
	}
	if len(errs) == 0 {
		return v, nil
	}
	return v, errs
}

// failFields answers 400 with the fields at fault: the usual error object
// plus "fields" (field → message).
func (h *Handler) failFields(c *gin.Context, errs pricing.FieldErrors) {
	h.log.Info("request refused", "method", c.Request.Method, "path", c.Request.URL.Path, "status", http.StatusBadRequest, "err", errs.Error())
	code := "invalid_" + errs.First()
	if errs.First() == "_" { // the request as a whole (amounts too large to compute): no field to name
		code = "invalid_request"
	}
	c.AbortWithStatusJSON(http.StatusBadRequest, APIError{Error: APIErrorDetail{Code: code, Message: errs.Error(), Fields: errs}})
}

// The fields each calculator endpoint reads. A field outside its list is
// refused (unknown_field), as bindJSON refuses it elsewhere: "hours" for
// total_hours, or the page's spelling "utilisation", would otherwise be
// answered from the defaults without a word.
var (
	estimateFields = []string{"flavor", "gpu_model", "gpu_count", "cpu_cores", "memory_gib", "memory_mib", "storage_gib",
		"duration", "hours_per_day", "days", "total_hours", "start"}
	tcoFields = append(pricing.TCOFieldNames(), "use_measured", "flavor")
)

// bindValues reads an API body as query values; fields names what the
// endpoint reads.
func (h *Handler) bindValues(c *gin.Context, fields []string) (url.Values, bool) {
	var body map[string]json.RawMessage
	if !h.bindJSON(c, &body) {
		return nil, false
	}
	for k := range body {
		if !slices.Contains(fields, k) {
			h.fail(c, newError(http.StatusBadRequest, "unknown_field", "this endpoint has no field \""+k+"\": check its spelling (it takes: "+strings.Join(fields, ", ")+")"))
			return nil, false
		}
	}
	v, errs := calcJSONValues(body)
	if errs != nil {
		h.failFields(c, errs)
		return nil, false
	}
	return v, true
}

type estimateLineJSON struct {
	Resource       string `json:"resource"`
	GPUModel       string `json:"gpu_model,omitempty"`
	QuantityMilli  int64  `json:"quantity_milli"`
	RateMicros     int64  `json:"rate_micros"`
	RatePer        string `json:"rate_per"`
	PerHourMicros  int64  `json:"per_hour_micros"`
	PerDayMicros   int64  `json:"per_day_micros"`
	PerMonthMicros int64  `json:"per_month_micros"`
	TotalMicros    int64  `json:"total_micros"`
	Total          string `json:"total"`
}

// offerJSON is a cloud offer as the API shows it.
type offerJSON struct {
	Provider     string `json:"provider"`
	Offer        string `json:"offer"`
	GPUModel     string `json:"gpu_model"`
	Tier         string `json:"tier"`
	Estimate     bool   `json:"estimate"`
	Currency     string `json:"currency"`
	PriceMicros  int64  `json:"price_per_gpu_hour_micros"`
	RateMicros   int64  `json:"rate_per_gpu_hour_micros"`
	Rate         string `json:"rate_per_gpu_hour"`
	ExchangeRate *int64 `json:"exchange_rate_micros,omitempty"`
	AsOf         string `json:"as_of"`
	Source       string `json:"source"`
	Note         string `json:"note"`
}

// estimateOfferJSON is an offer priced for an estimate.
type estimateOfferJSON struct {
	offerJSON
	CostMicros int64  `json:"cost_micros"`
	Cost       string `json:"cost"`
	// HereVsOfferPct is (here − offer)/offer in %: negative = cheaper here.
	HereVsOfferPct *float64 `json:"here_vs_offer_pct"`
}

// tcoOfferJSON is an offer compared with owning.
type tcoOfferJSON struct {
	offerJSON
	BreakEvenUtilization float64  `json:"break_even_utilization"`
	BreakEvenReachable   bool     `json:"break_even_reachable"`
	BreakEvenMonths      *float64 `json:"break_even_months"` // null: never
	RentPerYearMicros    int64    `json:"rent_per_year_micros"`
}

func (h *Handler) offerJSON(o pricing.PricedOffer) offerJSON {
	j := offerJSON{Provider: o.Provider, Offer: o.Name, GPUModel: o.GPUModel, Tier: o.Tier, Estimate: o.Derived, Currency: o.Currency,
		PriceMicros: o.PriceMicros, RateMicros: o.RateMicros, Rate: pricing.FormatRate(o.RateMicros), AsOf: o.AsOf, Source: o.Source, Note: o.Note}
	if o.Converted() {
		fx := o.FXMicros
		j.ExchangeRate = &fx
	}
	return j
}

// apiCalculatorEstimate: POST /api/v1/calculator/estimate {flavor | gpu_model,
// gpu_count, cpu_cores, memory_gib; storage_gib; hours_per_day and days, or
// total_hours; start?} — the cost here, per resource, and at cloud offers.
func (h *Handler) apiCalculatorEstimate(c *gin.Context) {
	v, ok := h.bindValues(c, estimateFields)
	if !ok {
		return
	}
	if v.Get("flavor") == "" && v.Get("gpu_count") == "" && v.Get("cpu_cores") == "" && v.Get("memory_gib") == "" && v.Get("memory_mib") == "" {
		h.failFields(c, pricing.FieldErrors{"flavor": "give a flavor, or a shape (gpu_model, gpu_count, cpu_cores, memory_gib)"})
		return
	}
	env, err := h.loadCalcEnv(c.Request.Context())
	if err != nil {
		h.fail(c, err)
		return
	}
	def := pricing.DefaultEstimate()
	def.Shape = pricing.Shape{}
	in, res, errs := h.runEstimate(env, v, def)
	if errs != nil {
		h.failFields(c, errs)
		return
	}
	out := APICalcEstimate{Currency: h.cfg.Currency, Flavor: in.Flavor,
		Shape: APICalcShape{GPUModel: in.Shape.GPUModel, GPUCount: in.Shape.GPUCount, CPUMilli: in.Shape.CPUMilli,
			MemoryGiB: json.Number(models.FormatMemoryGiB(in.Shape.MemoryMiB)), MemoryMiB: in.Shape.MemoryMiB, StorageMilliGiB: in.StorageMilliGiB},
		Duration: in.Duration, Start: res.Start.Format(time.RFC3339), Runs: res.Runs, RunSeconds: res.RunSeconds,
		BilledRunSeconds: res.BilledRunSeconds, CalendarSeconds: res.CalendarSeconds, MinChargeApplied: res.MinChargeApplied,
		PerHourMicros: res.PerHour, PerHour: h.decimal(res.PerHour),
		PerDayMicros: res.PerDay, PerDay: h.decimal(res.PerDay),
		PerMonthMicros: res.PerMonth, PerMonth: h.decimal(res.PerMonth),
		ComputeTotalMicros: res.ComputeTotal, StorageTotalMicros: res.StorageTotal,
		TotalMicros: res.Total, Total: h.decimal(res.Total), Query: calcPageEstimateValues(in).Encode(),
	}
	lines := []estimateLineJSON{}
	for _, l := range res.Resources {
		per := "unit-hour"
		if l.Resource == pricing.Storage {
			per = "GiB-month"
		}
		lines = append(lines, estimateLineJSON{Resource: l.Resource, GPUModel: l.GPUModel, QuantityMilli: l.QuantityMilli,
			RateMicros: l.RateMicros, RatePer: per, PerHourMicros: l.PerHour, PerDayMicros: l.PerDay, PerMonthMicros: l.PerMonth,
			TotalMicros: l.Total, Total: h.decimal(l.Total)})
	}
	out.Lines = lines
	cloud := []estimateOfferJSON{}
	for _, cmp := range env.compare(res) {
		j := estimateOfferJSON{offerJSON: h.offerJSON(cmp.PricedOffer), CostMicros: cmp.Cost, Cost: h.decimal(cmp.Cost)}
		if cmp.VsHereOK {
			p := float64(cmp.VsHereBps) / 100
			j.HereVsOfferPct = &p
		}
		cloud = append(cloud, j)
	}
	out.Cloud = cloud
	out.CloudLeftOut = env.missing
	c.JSON(http.StatusOK, out)
}

// tcoJSON is the API's TCO answer: SPEC §8 names (owned_per_gpu_hour, and
// per offer break_even_utilization), money in micro-units plus text.
func (h *Handler) tcoJSON(env *calcEnv, in pricing.TCOInput, t *pricing.TCOResult) APICalcTCO {
	annual := func(a pricing.AnnualCost) APICalcAnnual {
		return APICalcAnnual{Utilization: a.Utilization, EnergyKWhPerYear: a.EnergyKWh,
			AnnualCostMicros: a.TotalMicros, AnnualCost: h.decimal(a.TotalMicros),
			OwnedPerGPUHourMicros: a.OwnedPerGPUHourMicros, OwnedPerGPUHour: pricing.FormatRate(a.OwnedPerGPUHourMicros)}
	}
	table := []APICalcAnnual{}
	for _, a := range t.Table {
		table = append(table, annual(a))
	}
	offers := []tcoOfferJSON{}
	for _, o := range t.Offers {
		j := tcoOfferJSON{offerJSON: h.offerJSON(o.PricedOffer), BreakEvenUtilization: o.BreakEvenUtilization,
			BreakEvenReachable: o.Reachable, RentPerYearMicros: o.RentPerYearMicros}
		if o.PaysBack {
			m := o.BreakEvenMonths
			j.BreakEvenMonths = &m
		}
		offers = append(offers, j)
	}
	series := []APICalcSeries{}
	for _, s := range t.Chart.Series {
		series = append(series, APICalcSeries{Label: s.Label, Own: s.Own, Estimate: s.Derived, PointsMicros: s.Points})
	}
	inputs := map[string]string{}
	for k, vs := range in.Values() {
		inputs[k] = vs[0]
	}
	applyModel, _ := env.applyModel(in.GPUModel)
	// An error here is a rate schedule that cannot price an hour, which
	// the estimate would have reported already: the share is then 0.
	sug, _ := env.suggestGPURate(applyModel, t.SuggestedRateMicros, time.Now())
	return APICalcTCO{
		Currency: h.cfg.Currency, Inputs: inputs, GPUModel: in.GPUModel, GPUsPerServer: in.GPUsPerServer,
		Utilization: t.Annual.Utilization, PeakKW: t.PeakKW, EnergyKWhPerYear: t.Annual.EnergyKWh,
		AnnualCostMicros: t.Annual.TotalMicros, AnnualCost: h.decimal(t.Annual.TotalMicros),
		Breakdown: APICalcBreakdown{DepreciationMicros: t.Annual.DepreciationMicros, EnergyMicros: t.Annual.EnergyMicros,
			ColocationMicros: t.Annual.ColocationMicros, MaintenanceMicros: t.Annual.MaintenanceMicros,
			StaffMicros: t.Annual.StaffMicros},
		RunningPerMonthMicros: t.RunningPerMonth,
		OwnedPerGPUHourMicros: t.Annual.OwnedPerGPUHourMicros, OwnedPerGPUHour: pricing.FormatRate(t.Annual.OwnedPerGPUHourMicros),
		ByUtilization: table, Offers: offers,
		Chart:             APICalcChart{Months: t.Chart.Months, Series: series},
		TargetUtilization: t.Target.Utilization, TargetOwnedPerGPUHourMicros: sug.OwnedMicros,
		CPUMemoryShare:      APICalcShare{Flavor: sug.Flavor, CPUCoresPerGPU: models.Millicores(sug.CPUMilliPerGPU), MemoryMiBPerGPU: sug.MemoryMiBPerGPU, PerGPUHourMicros: sug.ShareMicros},
		SuggestedRateMicros: sug.RateMicros, SuggestedRate: pricing.FormatRate(sug.RateMicros), ApplyModel: applyModel,
		CloudLeftOut: env.missing, Query: in.Values().Encode(), Measured: env.measuredNote,
	}
}

// apiCalculatorTCO: POST /api/v1/calculator/tco {gpu_model, gpus_per_server,
// server_price, …} (SPEC §8; missing fields take the page's defaults).
func (h *Handler) apiCalculatorTCO(c *gin.Context) {
	v, ok := h.bindValues(c, tcoFields)
	if !ok {
		return
	}
	env, err := h.loadCalcEnv(c.Request.Context())
	if err != nil {
		h.fail(c, err)
		return
	}
	in, res, errs := h.runTCO(env, v)
	if errs != nil {
		h.failFields(c, errs)
		return
	}
	c.JSON(http.StatusOK, h.tcoJSON(env, in, res))
}

// apiCalculatorApplyRate: POST /api/v1/admin/calculator/apply-rate {TCO
// request} — sets the GPU model's rate to the suggested internal rate.
func (h *Handler) apiCalculatorApplyRate(c *gin.Context) {
	v, ok := h.bindValues(c, tcoFields)
	if !ok {
		return
	}
	pr, errs, err := h.applySuggestedRate(c, v, nil)
	switch {
	case errs != nil:
		h.failFields(c, errs)
	case err != nil:
		h.fail(c, err)
	default:
		c.JSON(http.StatusOK, APIRateApplied{Added: apiPriceRate(pr), Rate: pricing.FormatRate(pr.Micros)})
	}
}

// decimal writes an amount for the API's text fields with the currency's
// own decimals (0 for JPY, 3 for KWD); the _micros fields are exact.
func (h *Handler) decimal(m int64) string { return pricing.Micros(m).Decimal(h.cfg.Currency) }
