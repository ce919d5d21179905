package handlers

import (
	"context"
	"fmt"
	"math/big"
	"net/http"
	"net/url"
	"sort"
	"strconv"
	"strings"
	"time"

	"github.com/gin-gonic/gin"

	"workbench/models"
	"workbench/models/pricing"
	"workbench/orchestrator"
	"workbench/templates"
	"workbench/templates/i18n"
)

// calcEnv is everything a calculation reads: this portal's price list, the
// cloud catalog with the admin's discounts and exchange rates, the flavors
// and the detected GPUs. The page, the CSV and the API all start from it,
// so they show the same numbers.
type calcEnv struct {
	currency string
	prices   pricing.Prices
	settings pricing.Settings
	// discountSet marks the discounts an admin chose (the rest are defaults).
	discountSet map[string]bool
	rows        []models.CloudPrice
	priced      []pricing.PricedOffer
	missing     map[string]int // offers left out for want of an exchange rate, by currency
	flavors     []models.Flavor
	detected    []calcDetected // most GPUs first
	// electricity is the admin's electricity price (micro-units per kWh;
	// electricitySet false: none), the TCO's default electricity price.
	electricity    int64
	electricitySet bool
	// measure reads the last 30 days of GPU telemetry of a model for the
	// TCO's "use measured"; measuredNote says what runTCO used.
	measure      func(model string) (pricing.Measured, error)
	measuredNote string
	measured     *pricing.Measured // what measuredNote words
	// lc is the language of the text a calculation writes: the page's
	// request context; nil (English) for the CSV and the JSON API.
	lc context.Context
}

type calcDetected struct {
	Model string
	Count int
}

func (h *Handler) loadCalcEnv(ctx context.Context) (*calcEnv, error) {
	scheds, err := h.store.Schedules(ctx)
	if err != nil {
		return nil, err
	}
	rows, cs, err := h.cloudCatalog(ctx)
	if err != nil {
		return nil, err
	}
	flavors, err := h.store.ListFlavors(ctx, false)
	if err != nil {
		return nil, err
	}
	gpus, err := h.pool.List(ctx)
	if err != nil {
		// The inventory only supplies defaults: price without it.
		h.log.Warn("calculator: read the GPU inventory", "err", err)
	}
	env := &calcEnv{currency: h.cfg.Currency, rows: rows, flavors: flavors, discountSet: map[string]bool{},
		prices: pricing.Prices{Schedules: scheds, MinCharge: h.wbs.Options().MinCharge}}
	if env.electricity, env.electricitySet, err = h.store.ElectricityPrice(ctx); err != nil {
		return nil, err
	}
	env.measure = func(model string) (pricing.Measured, error) {
		return h.measuredTCO(ctx, model)
	}
	env.settings = pricing.Settings{Currency: h.cfg.Currency, DiscountsBps: map[string]int64{}, FX: pricing.Conversions(h.cfg.Currency, adminFXRates(h.cfg.Currency, cs), pricing.DefaultFXRates)}
	for tier, bps := range pricing.DefaultDiscountsBps {
		env.settings.DiscountsBps[tier] = bps
	}
	for tier, bps := range cs.DiscountsBps {
		env.settings.DiscountsBps[tier], env.discountSet[tier] = bps, true
	}
	offers := make([]pricing.Offer, 0, len(rows))
	for _, r := range rows {
		offers = append(offers, calcOfferOf(r))
	}
	env.priced, env.missing = pricing.PriceOffers(pricing.Derive(offers, env.settings.DiscountsBps), env.settings)
	count := map[string]int{}
	for _, g := range gpus {
		count[g.Model]++
	}
	for m, n := range count {
		env.detected = append(env.detected, calcDetected{m, n})
	}
	sort.Slice(env.detected, func(i, j int) bool {
		a, b := env.detected[i], env.detected[j]
		return a.Count > b.Count || (a.Count == b.Count && a.Model < b.Model)
	})
	return env, nil
}

func calcOfferOf(r models.CloudPrice) pricing.Offer {
	return pricing.Offer{ID: r.ID, Provider: r.Provider, Name: r.Offer, GPUModel: r.GPUModel, GPUsInOffer: r.GPUsInOffer,
		Tier: r.Tier, Currency: r.Currency, PriceMicros: r.PriceMicros, AsOf: r.AsOf, Source: r.Source, Note: r.Note}
}

// flavor finds a flavor by name or id.
func (e *calcEnv) flavor(key string) *models.Flavor {
	for i, f := range e.flavors {
		if f.Name == key || strconv.FormatInt(f.ID, 10) == key {
			return &e.flavors[i]
		}
	}
	return nil
}

// knownModel reports whether a TCO can be about model: a GPU this portal
// has or prices, or one the cloud catalog lists.
func (e *calcEnv) knownModel(model string) bool {
	for _, m := range e.modelChoices() {
		if pricing.SameFamily(m, model) {
			return true
		}
	}
	return false
}

// modelChoices lists the detected and priced GPU models, then the catalog's.
func (e *calcEnv) modelChoices() []string {
	seen := map[string]bool{}
	var out []string
	addModel := func(m string) {
		if m != "" && !seen[m] {
			seen[m] = true
			out = append(out, m)
		}
	}
	for _, d := range e.detected {
		addModel(d.Model)
	}
	for _, m := range e.prices.GPUModels() {
		addModel(m)
	}
	var cat []string
	for _, r := range e.rows {
		cat = append(cat, r.GPUModel)
	}
	sort.Strings(cat)
	for _, m := range cat {
		addModel(m)
	}
	return out
}

// applyModel is the price-list GPU model a suggested rate for model would
// set: the model itself when it is priced, else the one priced model of the
// same family. It returns "" and the reason when there is none (or several).
func (e *calcEnv) applyModel(model string) (string, string) {
	priced := e.prices.GPUModels()
	var same []string
	for _, m := range priced {
		if m == model {
			return m, ""
		}
		if pricing.SameFamily(m, model) {
			same = append(same, m)
		}
	}
	switch len(same) {
	case 1:
		return same[0], ""
	case 0:
		return "", i18n.T(e.lc, "This portal has no %s GPUs in its price list, so there is no rate to set; choose a model from the price list to apply a rate.", model)
	default:
		return "", i18n.T(e.lc, "Several priced models match %s (%s): enter the exact model to apply a rate.", model, strings.Join(same, ", "))
	}
}

// defaultEstimate starts the estimate from the user's last flavor (else the
// smallest flavor of the main GPU model, else any flavor).
func (h *Handler) defaultEstimate(ctx context.Context, u *models.User, env *calcEnv) pricing.EstimateInput {
	def := pricing.DefaultEstimate()
	if u != nil {
		if wbs, err := h.store.ListWorkbenches(ctx, u.ID); err == nil && len(wbs) > 0 {
			for _, f := range env.flavors {
				if f.ID == wbs[0].FlavorID {
					def.Flavor = f.Name
					return def
				}
			}
		}
	}
	main := ""
	if len(env.detected) > 0 {
		main = env.detected[0].Model
	}
	for _, f := range env.flavors { // ordered by GPU count, name
		if f.Enabled && f.GPUCount > 0 && f.GPUModel == main {
			def.Flavor = f.Name
			return def
		}
	}
	for _, f := range env.flavors {
		if f.Enabled {
			def.Flavor = f.Name
			return def
		}
	}
	return def
}

// defaultTCO is an 8-GPU (or the detected count) server of the main
// detected GPU model, with typical values.
func (h *Handler) defaultTCO(env *calcEnv) (pricing.TCOInput, string) {
	model, n := "", int64(8)
	if len(env.detected) > 0 {
		model, n = env.detected[0].Model, int64(min(env.detected[0].Count, pricing.MaxGPUsPerServer))
	} else if ms := env.prices.GPUModels(); len(ms) > 0 {
		model = ms[0]
	} else {
		model = "H100-80GB"
	}
	rate, note := calcRatInt(1), i18n.T(env.lc, "typical money values are in USD.")
	if !strings.EqualFold(env.currency, "USD") {
		if fx, ok := env.settings.FX["USD"]; ok {
			rate, note = big.NewRat(fx.Num, fx.Den), i18n.T(env.lc, "typical money values are USD figures converted to %s at %s.", env.currency, fxDescribe(env.lc, fx))
		} else {
			rate, note = nil, i18n.T(env.lc, "typical money values are USD figures: enter your %s amounts (or let an admin set a USD exchange rate).", env.currency)
		}
	}
	return pricing.DefaultTCO(model, n, rate), note
}

func calcRatInt(n int64) *big.Rat { return big.NewRat(n, 1) }

// runEstimate parses and prices an estimate, resolving a flavor to the
// shape billing would charge for it.
func (h *Handler) runEstimate(env *calcEnv, v url.Values, def pricing.EstimateInput) (pricing.EstimateInput, *pricing.EstimateResult, pricing.FieldErrors) {
	in, errs := pricing.ParseEstimate(v, def)
	if in.Flavor != "" {
		if f := env.flavor(in.Flavor); f != nil {
			in.Flavor, in.Shape = f.Name, orchestrator.FlavorShape(f)
		} else {
			if errs == nil {
				errs = pricing.FieldErrors{}
			}
			errs["flavor"] = i18n.T(env.lc, "there is no flavor %q", in.Flavor)
		}
	}
	if errs != nil {
		return in, nil, errs
	}
	// Priced from the next whole second: billing starts on whole seconds,
	// and a rate set a moment ago is already in force then.
	res, errs := pricing.Estimate(in, env.prices, time.Now().Add(time.Second-1).Truncate(time.Second))
	if msg, ok := errs["gpu_model"]; ok && in.Flavor != "" {
		delete(errs, "gpu_model")
		errs["flavor"] = msg
	}
	return in, res, errs
}

// compare prices the estimate's GPUs at the cloud offers of its model.
func (env *calcEnv) compare(res *pricing.EstimateResult) []pricing.Comparison {
	if res == nil || res.Input.Shape.GPUCount == 0 {
		return nil
	}
	if k := res.Input.Shape.UnitKind; k != "" && k != pricing.GPU {
		return nil // cloud offers are whole GPUs: a MIG instance or slice is not one
	}
	return pricing.Compare(env.priced, res.Input.Shape.GPUModel, res.GPUSeconds(), res.ComputeTotal)
}

// runTCO parses and computes a TCO.
func (h *Handler) runTCO(env *calcEnv, v url.Values) (pricing.TCOInput, *pricing.TCOResult, pricing.FieldErrors) {
	def, _ := h.defaultTCO(env)
	if env.electricitySet {
		def.ElectricityPerKWh = big.NewRat(env.electricity, 1_000_000)
	}
	var measureErr string
	if useMeasured(v) {
		v, measureErr = env.useMeasured(v, &def)
	}
	in, errs := pricing.ParseTCO(v, def)
	if measureErr != "" {
		if errs == nil {
			errs = pricing.FieldErrors{}
		}
		errs["use_measured"] = measureErr
	}
	// Only a model someone typed can be unknown: the default always prices.
	if _, bad := errs["gpu_model"]; !bad && v.Get("gpu_model") != "" && !env.knownModel(in.GPUModel) {
		if errs == nil {
			errs = pricing.FieldErrors{}
		}
		errs["gpu_model"] = i18n.T(env.lc, "unknown GPU model %q: choose one of %s", in.GPUModel, strings.Join(env.modelChoices(), ", "))
	}
	if errs != nil {
		return in, nil, errs
	}
	return in, pricing.TCO(in, env.priced), nil
}

// The page puts the estimate's custom GPU model under shape_gpu_model,
// because gpu_model is the TCO's field (SPEC §8) and both live in one URL.
var calcEstimateKeys = []string{"flavor", "gpu_count", "cpu_cores", "memory_gib", "memory_mib", "storage_gib", "duration", "hours_per_day", "days", "total_hours", "start"}

// calcEstimateQuery picks the estimate's fields out of the page's query.
func calcEstimateQuery(q url.Values) url.Values {
	v := url.Values{}
	for _, k := range calcEstimateKeys {
		if vs, ok := q[k]; ok {
			v[k] = vs
		}
	}
	if vs, ok := q["shape_gpu_model"]; ok {
		v["gpu_model"] = vs
	}
	return v
}

// calcPageEstimateValues encodes an estimate with the page's field names.
func calcPageEstimateValues(in pricing.EstimateInput) url.Values {
	v := in.Values()
	if m, ok := v["gpu_model"]; ok {
		v.Del("gpu_model")
		v["shape_gpu_model"] = m
	}
	return v
}

// calcTCOQuery picks the TCO's fields out of the page's query.
func calcTCOQuery(q url.Values) url.Values {
	v := url.Values{}
	if useMeasured(q) {
		v.Set("use_measured", "1")
	}
	for _, k := range pricing.TCOFieldNames() {
		if vs, ok := q[k]; ok {
			v[k] = vs
		}
	}
	return v
}

// calcRawEstimateQuery is the estimate part of q with the page's names (to carry
// along as given when it does not parse).
func calcRawEstimateQuery(q url.Values) url.Values {
	v := url.Values{}
	for _, k := range append(calcEstimateKeys, "shape_gpu_model") {
		if vs, ok := q[k]; ok {
			v[k] = vs
		}
	}
	return v
}

func calcMergeValues(parts ...url.Values) url.Values {
	out := url.Values{}
	for _, p := range parts {
		for k, vs := range p {
			out[k] = vs
		}
	}
	return out
}

func calcHidden(v url.Values) []templates.CalcHidden {
	keys := make([]string, 0, len(v))
	for k := range v {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	var out []templates.CalcHidden
	for _, k := range keys {
		for _, val := range v[k] {
			out = append(out, templates.CalcHidden{Name: k, Value: val})
		}
	}
	return out
}

// calcRun is one request's estimate and TCO with their inputs.
type calcRun struct {
	env      *calcEnv
	est      pricing.EstimateInput
	estRes   *pricing.EstimateResult
	estErrs  pricing.FieldErrors
	cloud    []pricing.Comparison
	tco      pricing.TCOInput
	tcoRes   *pricing.TCOResult
	tcoErrs  pricing.FieldErrors
	estPart  url.Values // the estimate's fields, page names
	tcoPart  url.Values
	moneyTip string
}

// calculate runs the page's (or the CSV's) query.
func (h *Handler) calculate(c *gin.Context, lc context.Context) (*calcRun, error) {
	ctx := c.Request.Context()
	env, err := h.loadCalcEnv(ctx)
	if err != nil {
		return nil, err
	}
	env.lc = lc
	q := c.Request.URL.Query()
	k := &calcRun{env: env}
	k.est, k.estRes, k.estErrs = h.runEstimate(env, calcEstimateQuery(q), h.defaultEstimate(ctx, currentUser(c), env))
	k.cloud = env.compare(k.estRes)
	k.tco, k.tcoRes, k.tcoErrs = h.runTCO(env, calcTCOQuery(q))
	_, k.moneyTip = h.defaultTCO(env)
	if k.estErrs == nil {
		k.estPart = calcPageEstimateValues(k.est)
	} else {
		k.estPart = calcRawEstimateQuery(q)
	}
	if k.tcoErrs == nil {
		k.tcoPart = k.tco.Values()
		if useMeasured(q) {
			k.tcoPart.Set("use_measured", "1")
		}
	} else {
		k.tcoPart = calcTCOQuery(q)
	}
	return k, nil
}

func (k *calcRun) query() string { return calcMergeValues(k.estPart, k.tcoPart).Encode() }

// calculatorPage: GET /calculator — the whole calculator; every input is in
// the query string, so a calculation is a link.
func (h *Handler) calculatorPage(c *gin.Context) {
	k, err := h.calculate(c, c.Request.Context())
	if err != nil {
		h.fail(c, err)
		return
	}
	u := currentUser(c)
	v := templates.CalculatorView{Currency: h.cfg.Currency, IsAdmin: u != nil && u.IsAdmin(),
		ShareURL: "/calculator?" + k.query(), CSVURL: "/calculator.csv?" + k.query()}
	v.Estimate = h.estimateForm(k)
	if k.estRes != nil {
		r := h.estimateView(k)
		v.Result = &r
	}
	v.TCO = h.tcoForm(k)
	if k.tcoRes != nil {
		t, err := h.tcoView(c, k)
		if err != nil {
			h.fail(c, err)
			return
		}
		v.TCOOut = &t
	}
	status := http.StatusOK
	if k.estErrs != nil || k.tcoErrs != nil {
		status = http.StatusBadRequest
	}
	h.render(c, status, templates.CalculatorPage(h.page(c, trc(c, "Calculator")), v))
}

// perGPUHour writes a rate per GPU-hour in the reader's style: "3.25
// USD/GPU-h", "¥3.25/GPU-h".
func (h *Handler) perGPUHour(lc context.Context, m int64) string {
	return templates.MoneyRate(lc, m, h.cfg.Currency) + i18n.T(lc, "/GPU-h")
}

func calcMilli(m int64) string { return pricing.FormatNumber(big.NewRat(m, 1000), 3) }

func (h *Handler) estimateForm(k *calcRun) templates.EstimateForm {
	in := k.est
	f := templates.EstimateForm{Flavor: in.Flavor, GPUModels: k.env.prices.GPUModels(), GPUModel: in.Shape.GPUModel,
		GPUCount: fmt.Sprint(in.Shape.GPUCount), CPUCores: calcMilli(in.Shape.CPUMilli), MemoryGiB: models.FormatMemoryGiB(in.Shape.MemoryMiB),
		StorageGiB: calcMilli(in.StorageMilliGiB), Duration: in.Duration, HoursPerDay: pricing.FormatNumber(in.HoursPerDay, 6),
		Days: fmt.Sprint(in.Days), TotalHours: pricing.FormatNumber(in.TotalHours, 6), Hidden: calcHidden(k.tcoPart),
		Errors: calcErrs(k.env.lc, k.estErrs)}
	if f.Flavor == "" {
		f.Flavor = "custom"
	}
	if !in.Start.IsZero() {
		f.Start = in.Start.Format(time.RFC3339)
	}
	// A field that did not parse is shown as typed.
	raw := k.estPart
	for name, dst := range map[string]*string{"gpu_count": &f.GPUCount, "cpu_cores": &f.CPUCores, "memory_gib": &f.MemoryGiB,
		"storage_gib": &f.StorageGiB, "hours_per_day": &f.HoursPerDay, "days": &f.Days, "total_hours": &f.TotalHours} {
		if _, bad := k.estErrs[name]; bad {
			*dst = raw.Get(name)
		}
	}
	for _, fl := range k.env.flavors {
		if !fl.Enabled && fl.Name != in.Flavor {
			continue
		}
		label := fl.Name
		if fl.GPUCount > 0 {
			label += " — " + unitTextT(k.env.lc, fl)
		}
		if fl.CPUMilli == 1000 {
			label += i18n.T(k.env.lc, ", 1 core, %s GiB", models.FormatMemoryGiB(fl.MemoryMiB))
		} else {
			label += i18n.T(k.env.lc, ", %s cores, %s GiB", fl.CPUMilli.String(), models.FormatMemoryGiB(fl.MemoryMiB))
		}
		f.Flavors = append(f.Flavors, templates.CalcOption{Value: fl.Name, Label: label})
	}
	return f
}

func calcResourceLabel(lc context.Context, r pricing.ResourceCost) (name, qty, rate string) {
	q, rt := calcMilli(r.QuantityMilli), pricing.FormatRate(r.RateMicros)
	switch r.Resource {
	case pricing.GPU:
		return i18n.T(lc, "GPU"), fmt.Sprintf("%s × %s", q, r.GPUModel), i18n.T(lc, "%s per GPU-hour", rt)
	case pricing.MIG:
		return i18n.T(lc, "MIG instance"), fmt.Sprintf("%s × %s", q, r.GPUModel), i18n.T(lc, "%s per instance-hour", rt)
	case pricing.Slice:
		return i18n.T(lc, "Shared-GPU slice"), fmt.Sprintf("%s × %s (%s)", q, r.GPUModel, i18n.T(lc, sharedLabel)), i18n.T(lc, "%s per slice-hour", rt)
	case pricing.CPU:
		cores := i18n.T(lc, "%s cores", q)
		if q == "1" {
			cores = i18n.T(lc, "1 core")
		}
		return i18n.T(lc, "CPU"), cores, i18n.T(lc, "%s per core-hour", rt)
	case pricing.Memory:
		return i18n.T(lc, "Memory"), q + " GiB", i18n.T(lc, "%s per GiB-hour", rt)
	default:
		return i18n.T(lc, "Home volume"), q + " GiB", i18n.T(lc, "%s per GiB-month", rt)
	}
}

// calcShapeText describes a priced shape in one line.
func calcShapeText(lc context.Context, in pricing.EstimateInput) string {
	var parts []string
	if in.Flavor != "" {
		parts = append(parts, in.Flavor+":")
	}
	if in.Shape.GPUCount > 0 {
		parts = append(parts, fmt.Sprintf("%d × %s,", in.Shape.GPUCount, in.Shape.GPUModel))
	}
	if in.Shape.CPUMilli == 1000 {
		parts = append(parts, i18n.T(lc, "1 CPU core, %s GiB memory", models.FormatMemoryGiB(in.Shape.MemoryMiB)))
	} else {
		parts = append(parts, i18n.T(lc, "%s CPU cores, %s GiB memory", calcMilli(in.Shape.CPUMilli), models.FormatMemoryGiB(in.Shape.MemoryMiB)))
	}
	if in.StorageMilliGiB > 0 {
		parts = append(parts, i18n.T(lc, ", %s GiB home volume", calcMilli(in.StorageMilliGiB)))
	}
	return strings.ReplaceAll(strings.Join(parts, " "), " ,", ",")
}

func calcDurationText(lc context.Context, r *pricing.EstimateResult) string {
	in := r.Input
	hours := pricing.FormatNumber(big.NewRat(r.Runs*r.RunSeconds, 3600), 2)
	if in.Duration == pricing.DurationTotal {
		return i18n.T(lc, "%s hours in one run", hours)
	}
	return i18n.T(lc, "%s h a day × %d days = %s hours", pricing.FormatNumber(in.HoursPerDay, 4), in.Days, hours)
}

func (h *Handler) estimateView(k *calcRun) templates.EstimateView {
	r, lc := k.estRes, k.env.lc
	v := templates.EstimateView{ShapeText: calcShapeText(lc, r.Input), DurationText: calcDurationText(lc, r), PerHour: h.amountText(lc, r.PerHour),
		PerDay: h.amountText(lc, r.PerDay), PerMonth: h.amountText(lc, r.PerMonth), ComputeTotal: h.amountText(lc, r.ComputeTotal),
		StorageTotal: h.amountText(lc, r.StorageTotal), Total: h.amountText(lc, r.Total)}
	if k.env.prices.MinCharge > 0 {
		v.MinChargeNote = i18n.T(lc, "Each run is charged at least %d s.", int64(k.env.prices.MinCharge/time.Second))
		if r.MinChargeApplied {
			v.MinChargeNote += " " + i18n.T(lc, "A run here is shorter, so each is billed as %d s.", r.BilledRunSeconds)
		}
	}
	if !r.RateChangeAt.IsZero() {
		v.RateChangeNote = i18n.T(lc, "A scheduled rate change falls inside: from %s each hour is priced at the rate in force then, so the per-day, per-month and total columns are not multiples of the hourly rate.",
			templates.WhenIn(lc, &r.RateChangeAt))
	}
	for _, l := range r.Resources {
		name, qty, rate := calcResourceLabel(lc, l)
		v.Lines = append(v.Lines, templates.EstimateLine{Resource: name, Quantity: qty, Rate: rate, PerHour: h.amountText(lc, l.PerHour),
			PerDay: h.amountText(lc, l.PerDay), PerMonth: h.amountText(lc, l.PerMonth), Total: h.amountText(lc, l.Total)})
	}
	switch {
	case r.Input.Shape.GPUCount == 0:
		v.CloudNote = i18n.T(lc, "This shape has no GPUs: there is no cloud GPU offer to compare with.")
	case r.Input.Shape.UnitKind != "" && r.Input.Shape.UnitKind != pricing.GPU:
		v.CloudNote = i18n.T(lc, "This flavor runs on a MIG instance or a slice of a shared GPU: cloud offers are whole GPUs, so there is nothing like it to compare with.")
	case len(k.cloud) == 0:
		v.CloudNote = i18n.T(lc, "The cloud price catalog has no offer for %s GPUs.", pricing.Family(r.Input.Shape.GPUModel))
	}
	for _, c := range k.cloud {
		row := templates.CloudRow{Provider: c.Provider, Offer: c.Name, GPUModel: c.GPUModel, Tier: templates.TierName(lc, c.Tier), Estimate: c.Derived,
			Price: templates.MoneyRate(lc, c.PriceMicros, c.Currency), Rate: h.perGPUHour(lc, c.RateMicros), Cost: h.amountText(lc, c.Cost),
			AsOf: calcOrDash(c.AsOf), Source: c.Source, Note: calcNote(lc, c.Note)}
		if c.Converted() {
			row.FX = fxDescribe(lc, c.FX)
		}
		row.Vs, row.Saving = calcVsText(lc, c)
		if c.Derived {
			v.Estimates = append(v.Estimates, row)
		} else {
			v.Cloud = append(v.Cloud, row)
		}
	}
	v.LeftOut = k.env.leftOutNotes()
	v.FXRates = k.env.fxNotes()
	v.Discounts = k.env.discountNote()
	return v
}

func calcOrDash(s string) string {
	if s == "" {
		return "—"
	}
	return s
}

// calcVsText words the comparison with an offer.
func calcVsText(lc context.Context, c pricing.Comparison) (string, bool) {
	if !c.VsHereOK {
		return "—", false
	}
	pct := pricing.FormatBps(calcAbs64(c.VsHereBps))
	if c.VsHereBps <= 0 {
		return i18n.T(lc, "saves %s here", pct), true
	}
	return i18n.T(lc, "%s more here", pct), false
}

func calcAbs64(n int64) int64 {
	if n < 0 {
		return -n
	}
	return n
}

func (e *calcEnv) leftOutNotes() []string {
	var out []string
	curs := make([]string, 0, len(e.missing))
	for cur := range e.missing {
		curs = append(curs, cur)
	}
	sort.Strings(curs)
	for _, cur := range curs {
		out = append(out, i18n.T(e.lc, "%[1]d offers in %[2]s are left out: no exchange rate from %[2]s to %[3]s is set.", e.missing[cur], cur, e.currency))
	}
	return out
}

func (e *calcEnv) fxNotes() []string {
	var curs []string
	for cur := range e.settings.FX {
		curs = append(curs, cur)
	}
	sort.Strings(curs)
	var out []string
	for _, cur := range curs {
		out = append(out, fxDescribe(e.lc, e.settings.FX[cur]))
	}
	return out
}

func (e *calcEnv) discountNote() string {
	var parts []string
	for _, tier := range pricing.DerivedTiers {
		s := fmt.Sprintf("%s %s", templates.TierName(e.lc, tier), pricing.FormatBps(e.settings.DiscountsBps[tier]))
		if !e.discountSet[tier] {
			s += " " + i18n.T(e.lc, "(default)")
		}
		parts = append(parts, s)
	}
	return i18n.T(e.lc, "Tiers a provider does not list are estimated from its on-demand price less: %s.", strings.Join(parts, ", "))
}

// calcTCOLabels are the TCO form's fields: label and unit ({cur}: the currency).
func calcTCOLabels(lc context.Context) []struct{ name, label, unit string } {
	return []struct{ name, label, unit string }{
		{"gpus_per_server", i18n.T(lc, "GPUs per server"), ""},
		{"server_price", i18n.T(lc, "Server price"), "{cur}"},
		{"depreciation_years", i18n.T(lc, "Depreciation"), i18n.T(lc, "years")},
		{"residual_value", i18n.T(lc, "Residual value"), "{cur}"},
		{"gpu_active_watts", i18n.T(lc, "GPU active power"), "W"},
		{"gpu_idle_watts", i18n.T(lc, "GPU idle power"), "W"},
		{"overhead_watts", i18n.T(lc, "Server overhead power"), "W"},
		{"pue", "PUE", ""},
		{"electricity_per_kwh", i18n.T(lc, "Electricity"), i18n.T(lc, "{cur} per kWh")},
		{"colo_per_kw_month", i18n.T(lc, "Colocation"), i18n.T(lc, "{cur} per kW-month")},
		{"rack_per_month", i18n.T(lc, "Rack"), i18n.T(lc, "{cur} per month")},
		{"maintenance_rate", i18n.T(lc, "Maintenance"), i18n.T(lc, "share of the price a year: 0.08 or 8%%")},
		{"staff_per_year", i18n.T(lc, "Staff"), i18n.T(lc, "{cur} per year")},
		{"utilization", i18n.T(lc, "Expected utilisation"), i18n.T(lc, "0–1 or %%")},
		{"target_utilization", i18n.T(lc, "Target utilisation for the internal rate"), i18n.T(lc, "0–1 or %%")},
		{"horizon_years", i18n.T(lc, "Chart horizon"), i18n.T(lc, "years")},
	}
}

func (h *Handler) tcoForm(k *calcRun) templates.TCOForm {
	lc := k.env.lc
	f := templates.TCOForm{GPUModel: k.tco.GPUModel, GPUModels: k.env.modelChoices(), Hidden: calcHidden(k.estPart),
		Errors: calcErrs(lc, k.tcoErrs), MoneyNote: k.moneyTip,
		UseMeasured: k.tcoPart.Get("use_measured") != "", MeasuredNote: calcMeasuredNote(k.env)}
	if k.env.electricitySet {
		f.MoneyNote += " " + i18n.T(lc, "The electricity price is the admin's (Billing).")
	}
	if _, bad := k.tcoErrs["gpu_model"]; bad {
		f.GPUModel = k.tcoPart.Get("gpu_model")
	}
	if len(k.env.detected) > 0 {
		var ds []string
		for _, d := range k.env.detected {
			ds = append(ds, fmt.Sprintf("%d × %s", d.Count, d.Model))
		}
		f.Detected = i18n.T(lc, "Detected here: %s.", strings.Join(ds, ", "))
	}
	for _, l := range calcTCOLabels(lc) {
		unit := strings.ReplaceAll(l.unit, "{cur}", h.cfg.Currency)
		val := k.tco.Value(l.name)
		if _, bad := k.tcoErrs[l.name]; bad {
			val = k.tcoPart.Get(l.name)
		}
		f.Fields = append(f.Fields, templates.TCOField{Name: l.name, Label: l.label, Unit: unit, Value: val, Hint: calcTypical(lc, l.name)})
	}
	return f
}

// calcPct prints a fraction as a percentage with one decimal; a share
// below 1 % keeps two significant digits rather than reading "0%" (a
// utilisation of 0.0001 was shown as 0%) or rounding 0.05 % to 0.1 %.
func calcPct(f float64) string {
	if p := f * 100; p > 0 && p < 1 {
		return strconv.FormatFloat(p, 'g', 2, 64) + "%"
	}
	return strings.TrimSuffix(strings.TrimSuffix(strconv.FormatFloat(f*100, 'f', 1, 64), "0"), ".") + "%"
}

func (h *Handler) tcoView(c *gin.Context, k *calcRun) (templates.TCOView, error) {
	t := k.tcoRes
	in := k.tco
	lc := k.env.lc
	v := templates.TCOView{GPUModel: in.GPUModel, Utilization: calcPct(t.Annual.Utilization),
		OwnedPerGPUHour: h.perGPUHour(lc, t.Annual.OwnedPerGPUHourMicros), AnnualCost: h.amountText(lc, t.Annual.TotalMicros),
		PeakKW: strconv.FormatFloat(t.PeakKW, 'f', 2, 64) + " kW", EnergyKWh: strconv.FormatFloat(t.Annual.EnergyKWh, 'f', 0, 64) + " kWh",
		RunningPerMonth: h.amountText(lc, t.RunningPerMonth), Target: calcPct(t.Target.Utilization),
		TargetOwned: h.perGPUHour(lc, t.SuggestedRateMicros), ApplyQuery: k.query()}
	v.Breakdown = []templates.CalcKV{
		{Label: i18n.T(lc, "Depreciation a year"), Value: h.amountText(lc, t.Annual.DepreciationMicros)},
		{Label: i18n.T(lc, "Energy a year"), Value: h.amountText(lc, t.Annual.EnergyMicros)},
		{Label: i18n.T(lc, "Colocation a year"), Value: h.amountText(lc, t.Annual.ColocationMicros)},
		{Label: i18n.T(lc, "Maintenance a year"), Value: h.amountText(lc, t.Annual.MaintenanceMicros)},
		{Label: i18n.T(lc, "Staff a year"), Value: h.amountText(lc, t.Annual.StaffMicros)},
		{Label: i18n.T(lc, "Total a year"), Value: h.amountText(lc, t.Annual.TotalMicros)},
	}
	var cheapest *pricing.BreakEven
	for i := range t.Offers {
		if !t.Offers[i].Derived {
			cheapest = &t.Offers[i]
			break
		}
	}
	for _, r := range t.Table {
		row := templates.TCORow{Utilization: calcPct(r.Utilization), EnergyKWh: strconv.FormatFloat(r.EnergyKWh, 'f', 0, 64) + " kWh",
			AnnualCost: h.amountText(lc, r.TotalMicros), PerGPUHour: h.perGPUHour(lc, r.OwnedPerGPUHourMicros),
			Expected: r.Utilization == t.Annual.Utilization}
		row.VsCheapest = "—"
		if cheapest != nil && cheapest.RateMicros > 0 {
			d := float64(r.OwnedPerGPUHourMicros-cheapest.RateMicros) / float64(cheapest.RateMicros)
			row.VsCheapest = i18n.T(lc, "%s cheaper than %s", calcPct(calcAbsf(d)), calcOfferLabel(lc, cheapest.Offer))
			if d > 0 {
				row.VsCheapest = i18n.T(lc, "%s dearer than %s", calcPct(calcAbsf(d)), calcOfferLabel(lc, cheapest.Offer))
			}
		}
		v.Table = append(v.Table, row)
	}
	if len(t.Offers) == 0 {
		v.NoOffers = i18n.T(lc, "The cloud price catalog has no comparable %s offer.", pricing.Family(in.GPUModel))
		if len(k.env.missing) > 0 {
			v.NoOffers += " " + strings.Join(k.env.leftOutNotes(), " ")
		}
	}
	for _, o := range t.Offers {
		row := templates.BreakEvenRow{Label: calcOfferLabel(lc, o.Offer), Tier: templates.TierName(lc, o.Tier), Estimate: o.Derived, Rate: h.perGPUHour(lc, o.RateMicros),
			BreakEven: calcPct(o.BreakEvenUtilization), Reachable: o.Reachable, RentPerYear: h.amountText(lc, o.RentPerYearMicros),
			AsOf: calcOrDash(o.AsOf), Source: o.Source}
		if !o.Reachable {
			row.BreakEven += " " + i18n.T(lc, "(never)")
		}
		if o.PaysBack {
			row.Months = i18n.T(lc, "%s months", strconv.FormatFloat(o.BreakEvenMonths, 'f', 1, 64))
		} else {
			row.Months = i18n.T(lc, "never")
		}
		if o.Derived {
			v.Estimates = append(v.Estimates, row)
		} else {
			v.Offers = append(v.Offers, row)
		}
	}
	v.Chart = templates.CostChartView{Currency: h.cfg.Currency, Months: t.Chart.Months,
		HorizonText: i18n.T(lc, "%s years (%d months)", pricing.FormatNumber(in.HorizonYears, 2), t.HorizonMonths)}
	labels := map[string]string{}
	for _, o := range t.Offers {
		labels[o.Label()] = calcOfferLabel(lc, o.Offer)
	}
	for _, s := range t.Chart.Series {
		label := s.Label
		if s.Own {
			label = i18n.T(lc, "Owning")
		} else if l, ok := labels[s.Label]; ok {
			label = l
		}
		v.Chart.Series = append(v.Chart.Series, templates.CostChartSeries{Label: label, Own: s.Own, Estimate: s.Derived, Values: s.Points})
	}
	v.ApplyModel, v.ApplyNote = k.env.applyModel(in.GPUModel)
	now := time.Now()
	sug, err := k.env.suggestGPURate(v.ApplyModel, t.SuggestedRateMicros, now)
	if err != nil {
		return v, err
	}
	v.ShareNote = sug.shareText(lc, h.perGPUHour)
	if sug.ShareCoversAllOwned {
		v.ApplyNote = sug.coversAllText(lc, h.perGPUHour)
	} else {
		v.SuggestedRate = h.perGPUHour(lc, sug.RateMicros)
	}
	if v.ApplyModel != "" {
		cur, err := h.store.CurrentPrices(c.Request.Context(), now)
		if err != nil {
			return v, err
		}
		if r, ok := cur[models.PriceKey(pricing.GPU, v.ApplyModel)]; ok {
			v.CurrentRate = h.perGPUHour(lc, r.Micros)
		}
	}
	return v, nil
}

func calcAbsf(f float64) float64 {
	if f < 0 {
		return -f
	}
	return f
}
