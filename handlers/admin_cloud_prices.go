package handlers

import (
	"context"
	"errors"
	"fmt"
	"math/big"
	"net/http"
	"sort"
	"strconv"
	"strings"

	"github.com/gin-gonic/gin"

	"workbench/models"
	"workbench/models/pricing"
	"workbench/templates"
	"workbench/templates/i18n"
)

// The admin side of the calculator: the cloud price catalog (CRUD), the
// discounts that derive missing tiers and the exchange rates.

// adminCloudPrices: GET /admin/cloud-prices.
func (h *Handler) adminCloudPrices(c *gin.Context) {
	h.renderCloudPrices(c, http.StatusOK, nil, nil)
}

// renderCloudPrices shows the page; typed (the settings form as posted)
// refills the inputs when errs points at some of them.
func (h *Handler) renderCloudPrices(c *gin.Context, status int, typed map[string]string, errs templates.FormErrors) {
	rows, cs, err := h.cloudCatalog(c.Request.Context())
	if err != nil {
		h.fail(c, err)
		return
	}
	v := templates.CloudPricesView{Currency: h.cfg.Currency, Errors: trcErrs(c, errs)}
	for _, r := range rows {
		v.Rows = append(v.Rows, templates.CloudPriceRow{ID: r.ID, Provider: r.Provider, Offer: r.Offer, GPUModel: r.GPUModel,
			GPUs: r.GPUsInOffer, Tier: r.Tier, Currency: r.Currency, Price: pricing.FormatRate(r.PriceMicros),
			AsOf: calcOrDash(r.AsOf), Source: r.Source, Note: r.Note})
	}
	value := func(name, current string) string {
		if s, ok := typed[name]; ok {
			return s
		}
		return current
	}
	for _, tier := range pricing.DerivedTiers {
		bps, set := cs.DiscountsBps[tier]
		hint := trc(c, "default %s; blank for the default", pricing.FormatBps(pricing.DefaultDiscountsBps[tier]))
		cur := ""
		if set {
			cur = pricing.FormatNumber(calcRat(bps, 100), 2)
		}
		name := "discount_" + tier
		v.Discounts = append(v.Discounts, templates.CalcSetting{Name: name, Label: trc(c, "%s discount (%%)", templates.TierName(c.Request.Context(), tier)), Value: value(name, cur), Hint: hint})
	}
	defaults := pricing.Conversions(h.cfg.Currency, nil, pricing.DefaultFXRates)
	for _, cur := range h.fxCurrencies(rows, cs) {
		name := "fx_" + cur
		val := ""
		if m, ok := cs.FXMicros[cur]; ok {
			val = pricing.FormatNumber(calcRat(m, 1_000_000), 6)
		}
		hint := trc(c, "how many %[1]s one %[2]s is worth; blank: no rate, %[2]s offers are left out", h.cfg.Currency, cur)
		if d, ok := defaults[cur]; ok {
			hint = trc(c, "how many %s one %s is worth; blank: the default %s", h.cfg.Currency, cur, fxDescribe(c, d))
		}
		meta := cs.FXMeta[cur]
		v.FX = append(v.FX,
			templates.CalcSetting{Name: name, Label: trc(c, "1 %s in %s", cur, h.cfg.Currency), Value: value(name, val), Hint: hint},
			templates.CalcSetting{Name: "fx_asof_" + cur, Label: trc(c, "%s rate as of", cur), Value: value("fx_asof_"+cur, meta.AsOf),
				Hint: trc(c, "the date the rate was seen (2026-11-30, 2026-11); blank: today"), Text: true},
			templates.CalcSetting{Name: "fx_source_" + cur, Label: trc(c, "%s rate source", cur), Value: value("fx_source_"+cur, meta.Source),
				Hint: trc(c, "where it comes from (a central bank's reference rate…); blank: “set by an admin”"), Text: true})
	}
	h.render(c, status, templates.CloudPricesPage(h.page(c, trc(c, "Cloud prices")), v))
}

// fxCurrencies are the currencies that need a rate: those of the catalog
// and USD (the TCO's typical values) other than the portal's, and any set.
func (h *Handler) fxCurrencies(rows []models.CloudPrice, cs models.CalculatorSettings) []string {
	seen := map[string]bool{}
	var out []string
	addCur := func(c string) {
		c = strings.ToUpper(c)
		if c != "" && !strings.EqualFold(c, h.cfg.Currency) && !seen[c] {
			seen[c] = true
			out = append(out, c)
		}
	}
	for _, r := range rows {
		addCur(r.Currency)
	}
	addCur("USD")
	for c := range cs.FXMicros {
		addCur(c)
	}
	sort.Strings(out)
	return out
}

// calculatorSettingsForm: POST /admin/cloud-prices/settings — discounts in
// percent, exchange rates in the portal currency per unit.
func (h *Handler) calculatorSettingsForm(c *gin.Context) {
	rows, cs, err := h.cloudCatalog(c.Request.Context())
	if err != nil {
		h.fail(c, err)
		return
	}
	typed := map[string]string{}
	disc := map[string]*int64{}
	fx := map[string]int64{}
	meta := map[string]models.FXMeta{}
	errs := templates.FormErrors{}
	for _, tier := range pricing.DerivedTiers {
		name := "discount_" + tier
		s := strings.TrimSpace(strings.TrimSuffix(strings.TrimSpace(c.PostForm(name)), "%"))
		typed[name] = s
		if s == "" {
			continue
		}
		bps, err := parsePercentBps(s)
		if err != nil {
			errs[name] = err.Error()
			continue
		}
		disc[tier] = &bps
	}
	for _, cur := range h.fxCurrencies(rows, cs) {
		name := "fx_" + cur
		s := strings.TrimSpace(c.PostForm(name))
		typed[name] = s
		fm := models.FXMeta{AsOf: strings.TrimSpace(c.PostForm("fx_asof_" + cur)), Source: strings.TrimSpace(c.PostForm("fx_source_" + cur))}
		typed["fx_asof_"+cur], typed["fx_source_"+cur] = fm.AsOf, fm.Source
		meta[cur] = fm
		if s == "" {
			fx[cur] = 0
			continue
		}
		m, err := models.ParseMoneyMicros(s)
		if err != nil || m == 0 {
			errs[name] = "must be a rate such as 0.14 (more than 0; blank to remove)"
			continue
		}
		if ref, off := fxFarFromShipped(h.cfg.Currency, cur, m); off {
			// 0.1389 typed for "1 USD in CNY" (the other way round) was
			// saved and made every USD offer 52 times cheaper.
			errs[name] = trc(c, "%s %s per 1 %s is over 20 times off the usual rate (1 %s = %s %s): is it the other way round?",
				pricing.Format(m), h.cfg.Currency, cur, cur, pricing.Format(ref), h.cfg.Currency)
			continue
		}
		fx[cur] = m
	}
	if len(errs) > 0 {
		h.renderCloudPrices(c, http.StatusBadRequest, typed, errs)
		return
	}
	if err := h.saveCalculatorSettings(c, cs, disc, fx, meta); err != nil {
		var ve *models.ValidationError
		if errors.As(err, &ve) {
			h.renderCloudPrices(c, http.StatusBadRequest, typed, templates.FormErrors{"_": ve.Error()})
			return
		}
		h.fail(c, err)
		return
	}
	h.flash(c, trc(c, "Calculator settings saved."))
	h.seeOther(c, "/admin/cloud-prices")
}

// saveCalculatorSettings stores discounts (nil: back to the default) and
// exchange rates (0: removed) with their date and source, and audits the
// change.
func (h *Handler) saveCalculatorSettings(c *gin.Context, before models.CalculatorSettings, disc map[string]*int64, fx map[string]int64, meta map[string]models.FXMeta) error {
	ctx := c.Request.Context()
	return h.audited(c, func(tx *models.Store) (models.AuditRecord, error) {
		for _, tier := range pricing.DerivedTiers {
			if bps := disc[tier]; bps != nil {
				if err := tx.SetTierDiscount(ctx, tier, *bps); err != nil {
					return models.AuditRecord{}, err
				}
			} else if _, set := before.DiscountsBps[tier]; set {
				// Blank: back to the default.
				if err := tx.SetTierDiscount(ctx, tier, pricing.DefaultDiscountsBps[tier]); err != nil {
					return models.AuditRecord{}, err
				}
			}
		}
		for cur, m := range fx {
			if m != 0 && m == before.FXMicros[cur] && meta[cur] == before.FXMeta[cur] {
				continue // unchanged: keep its date
			}
			if err := tx.SetExchangeRate(ctx, cur, m, meta[cur].AsOf, meta[cur].Source); err != nil {
				return models.AuditRecord{}, err
			}
		}
		after, err := tx.CalculatorSettings(ctx)
		return auditRec("calculator.settings", "calculator", before, after), err
	})
}

// parsePercentBps reads "35" or "35.5" (percent, up to 2 decimals) as basis points.
func parsePercentBps(s string) (int64, error) {
	m, err := models.ParseMoneyMicros(s)
	if err != nil || m%10_000 != 0 || m >= 100_000_000 {
		return 0, errors.New("must be a percentage from 0 to 99.99")
	}
	return m / 10_000, nil
}

func (h *Handler) cloudPriceNewForm(c *gin.Context) {
	h.renderCloudPriceForm(c, http.StatusOK, templates.CloudPriceForm{Tier: "on-demand", Currency: h.cfg.Currency, GPUsInOffer: "1"})
}

func (h *Handler) cloudPriceEditForm(c *gin.Context) {
	id, _ := strconv.ParseInt(c.Param("id"), 10, 64)
	p, err := h.store.CloudPriceByID(c.Request.Context(), id)
	if err != nil {
		h.fail(c, err)
		return
	}
	h.renderCloudPriceForm(c, http.StatusOK, templates.CloudPriceForm{ID: p.ID, Provider: p.Provider, Offer: p.Offer,
		GPUModel: p.GPUModel, GPUsInOffer: strconv.Itoa(p.GPUsInOffer), Tier: p.Tier, Currency: p.Currency,
		Price: pricing.FormatRate(p.PriceMicros), AsOf: p.AsOf, Source: p.Source, Note: p.Note})
}

func (h *Handler) renderCloudPriceForm(c *gin.Context, status int, f templates.CloudPriceForm) {
	f.Tiers = models.CloudTiers
	f.Errors = trcErrs(c, f.Errors)
	h.render(c, status, templates.CloudPriceFormPage(h.page(c, trc(c, "Cloud price")), f))
}

func (h *Handler) cloudPriceCreateForm(c *gin.Context) { h.saveCloudPriceForm(c, 0) }

func (h *Handler) cloudPriceUpdateForm(c *gin.Context) {
	id, err := strconv.ParseInt(c.Param("id"), 10, 64)
	if err != nil {
		h.fail(c, errNotFound)
		return
	}
	h.saveCloudPriceForm(c, id)
}

func (h *Handler) saveCloudPriceForm(c *gin.Context, id int64) {
	f := templates.CloudPriceForm{ID: id, Provider: c.PostForm("provider"), Offer: c.PostForm("offer"), GPUModel: c.PostForm("gpu_model"),
		GPUsInOffer: c.PostForm("gpus_in_offer"), Tier: c.PostForm("tier"), Currency: c.PostForm("currency"),
		Price: c.PostForm("price_per_gpu_hour"), AsOf: c.PostForm("as_of"), Source: c.PostForm("source"), Note: c.PostForm("note")}
	p := &models.CloudPrice{ID: id, Provider: f.Provider, Offer: f.Offer, GPUModel: f.GPUModel, Tier: f.Tier, Currency: f.Currency,
		AsOf: f.AsOf, Source: f.Source, Note: f.Note, GPUsInOffer: 1}
	var err error
	if n := strings.TrimSpace(f.GPUsInOffer); n != "" {
		if p.GPUsInOffer, err = strconv.Atoi(n); err != nil {
			err = &models.ValidationError{Field: "gpus_in_offer", Message: "must be a whole number"}
		}
	}
	if err == nil {
		if p.PriceMicros, err = models.ParseMoneyMicros(f.Price); err != nil {
			err = &models.ValidationError{Field: "price_per_gpu_hour", Message: err.Error()}
		}
	}
	if err == nil {
		err = h.saveCloudPrice(c, p)
	}
	var ve *models.ValidationError
	switch {
	case errors.As(err, &ve):
		f.Errors = templates.FormErrors{ve.Field: ve.Message}
		h.renderCloudPriceForm(c, http.StatusBadRequest, f)
	case errors.Is(err, models.ErrConflict):
		f.Errors = templates.FormErrors{"_": err.Error()}
		h.renderCloudPriceForm(c, http.StatusConflict, f)
	case err != nil:
		h.fail(c, err)
	default:
		h.flash(c, trc(c, "Cloud price %s %s saved.", p.Provider, p.Offer))
		h.seeOther(c, "/admin/cloud-prices")
	}
}

// saveCloudPrice creates (ID 0) or updates a catalog row and audits it.
func (h *Handler) saveCloudPrice(c *gin.Context, p *models.CloudPrice) error {
	ctx := c.Request.Context()
	return h.audited(c, func(tx *models.Store) (models.AuditRecord, error) {
		if p.ID == 0 {
			err := tx.CreateCloudPrice(ctx, p)
			return auditRec("cloud_price.create", cloudPriceTarget(p), nil, p), err
		}
		before, err := tx.CloudPriceByID(ctx, p.ID)
		if err != nil {
			return models.AuditRecord{}, err
		}
		err = tx.UpdateCloudPrice(ctx, p)
		return auditRec("cloud_price.update", cloudPriceTarget(p), before, p), err
	})
}

func cloudPriceTarget(p *models.CloudPrice) string {
	return fmt.Sprintf("%d %s %s %s", p.ID, p.Provider, p.Offer, p.Tier)
}

func (h *Handler) deleteCloudPrice(c *gin.Context) error {
	id, err := strconv.ParseInt(c.Param("id"), 10, 64)
	if err != nil {
		return errNotFound
	}
	ctx := c.Request.Context()
	return h.audited(c, func(tx *models.Store) (models.AuditRecord, error) {
		before, err := tx.CloudPriceByID(ctx, id)
		if err != nil {
			return models.AuditRecord{}, err
		}
		err = tx.DeleteCloudPrice(ctx, id)
		return auditRec("cloud_price.delete", cloudPriceTarget(before), before, nil), err
	})
}

// cloudPriceDeleteForm: POST /admin/cloud-prices/:id/delete.
func (h *Handler) cloudPriceDeleteForm(c *gin.Context) {
	ctx := c.Request.Context()
	id, _ := strconv.ParseInt(c.Param("id"), 10, 64)
	if p, err := h.store.CloudPriceByID(ctx, id); err == nil &&
		!h.askedFirst(c, templates.ConfirmView{Question: i18n.T(ctx, "Delete %s %s (%s)?", p.Provider, p.Offer, templates.TierName(ctx, p.Tier)),
			Yes: i18n.T(ctx, "Delete"), Back: "/admin/cloud-prices"}) {
		return
	}
	if err := h.deleteCloudPrice(c); err != nil {
		h.fail(c, err)
		return
	}
	h.flash(c, trc(c, "Cloud price deleted."))
	h.seeOther(c, "/admin/cloud-prices")
}

// apiCloudPrices: GET /api/v1/cloud-prices — the catalog (every logged-in
// user sees it on the calculator page anyway) with the calculator settings.
func (h *Handler) apiCloudPrices(c *gin.Context) {
	rows, cs, err := h.cloudCatalog(c.Request.Context())
	if err != nil {
		h.fail(c, err)
		return
	}
	c.JSON(http.StatusOK, APICloudPrices{Currency: h.cfg.Currency, Items: mapList(rows, apiCloudPrice).Items, Settings: h.settingsJSON(cs)})
}

// cloudPriceBody is the API's catalog row: the price in major units (a
// number or a string, read exactly) or in micro-units.
type cloudPriceBody struct {
	Provider          string       `json:"provider"`
	Offer             string       `json:"offer"`
	GPUModel          string       `json:"gpu_model"`
	GPUsInOffer       *int         `json:"gpus_in_offer"` // absent: 1; 0 is refused
	Tier              string       `json:"tier"`
	Currency          string       `json:"currency"`
	PricePerGPUHour   *calcDecimal `json:"price_per_gpu_hour"`
	PricePerGPUMicros *int64       `json:"price_per_gpu_hour_micros"`
	AsOf              string       `json:"as_of"`
	Source            string       `json:"source"`
	Note              string       `json:"note"`
}

// calcDecimal keeps a JSON number's (or string's) text, to parse it exactly.
type calcDecimal string

func (d *calcDecimal) UnmarshalJSON(b []byte) error {
	s := strings.TrimSpace(string(b))
	if strings.HasPrefix(s, `"`) {
		unq, err := strconv.Unquote(s)
		if err != nil {
			return err
		}
		s = unq
	}
	*d = calcDecimal(s)
	return nil
}

func (b cloudPriceBody) price() (*models.CloudPrice, error) {
	p := &models.CloudPrice{Provider: b.Provider, Offer: b.Offer, GPUModel: b.GPUModel, GPUsInOffer: 1, Tier: b.Tier,
		Currency: b.Currency, AsOf: b.AsOf, Source: b.Source, Note: b.Note}
	if b.GPUsInOffer != nil {
		p.GPUsInOffer = *b.GPUsInOffer
	}
	switch {
	case b.PricePerGPUMicros != nil:
		p.PriceMicros = *b.PricePerGPUMicros
	case b.PricePerGPUHour != nil:
		m, err := models.ParseMoneyMicros(string(*b.PricePerGPUHour))
		if err != nil {
			return nil, &models.ValidationError{Field: "price_per_gpu_hour", Message: err.Error()}
		}
		p.PriceMicros = m
	default:
		return nil, &models.ValidationError{Field: "price_per_gpu_hour", Message: "is required"}
	}
	return p, nil
}

// apiCloudPriceCreate: POST /api/v1/admin/cloud-prices.
func (h *Handler) apiCloudPriceCreate(c *gin.Context) {
	var body cloudPriceBody
	if !h.bindJSON(c, &body) {
		return
	}
	p, err := body.price()
	if err == nil {
		err = h.saveCloudPrice(c, p)
	}
	if err != nil {
		h.fail(c, err)
		return
	}
	c.JSON(http.StatusCreated, apiCloudPrice(p))
}

// apiCloudPriceUpdate: PUT /api/v1/admin/cloud-prices/:id (the whole row).
func (h *Handler) apiCloudPriceUpdate(c *gin.Context) {
	id, err := strconv.ParseInt(c.Param("id"), 10, 64)
	if err != nil {
		h.fail(c, errNotFound)
		return
	}
	var body cloudPriceBody
	if !h.bindJSON(c, &body) {
		return
	}
	p, err := body.price()
	if err == nil {
		p.ID = id
		err = h.saveCloudPrice(c, p)
	}
	if err != nil {
		h.fail(c, err)
		return
	}
	c.JSON(http.StatusOK, apiCloudPrice(p))
}

// apiCloudPriceDelete: DELETE /api/v1/admin/cloud-prices/:id.
func (h *Handler) apiCloudPriceDelete(c *gin.Context) {
	if err := h.deleteCloudPrice(c); err != nil {
		h.fail(c, err)
		return
	}
	c.Status(http.StatusNoContent)
}

func (h *Handler) settingsJSON(cs models.CalculatorSettings) APICalcSettings {
	disc, discBps := map[string]APICalcDiscount{}, map[string]int64{}
	for _, tier := range pricing.DerivedTiers {
		bps, set := cs.DiscountsBps[tier]
		if !set {
			bps = pricing.DefaultDiscountsBps[tier]
		}
		disc[tier], discBps[tier] = APICalcDiscount{Bps: bps, Set: set}, bps
	}
	fx := map[string]int64{}
	for cur, m := range cs.FXMicros {
		fx[cur] = m
	}
	// The rates in force, defaults included, each with its date and source.
	var inForce []APIExchangeRate
	conv := pricing.Conversions(h.cfg.Currency, adminFXRates(h.cfg.Currency, cs), pricing.DefaultFXRates)
	curs := make([]string, 0, len(conv))
	for cur := range conv {
		curs = append(curs, cur)
	}
	sort.Strings(curs)
	for _, cur := range curs {
		k := conv[cur]
		inForce = append(inForce, APIExchangeRate{Currency: cur, From: k.Rate.From, To: k.Rate.To, RateMicros: k.Rate.Micros,
			PortalMicrosPerUnit: k.PortalMicros(), AsOf: k.Rate.AsOf, Source: k.Rate.Source, Default: k.Rate.Default})
	}
	return APICalcSettings{Currency: h.cfg.Currency, Discounts: disc, DiscountsBps: discBps, ExchangeRatesMicros: fx, ExchangeRates: inForce}
}

// apiCalculatorSettings: GET /api/v1/admin/calculator/settings.
func (h *Handler) apiCalculatorSettings(c *gin.Context) {
	cs, err := h.store.CalculatorSettings(c.Request.Context())
	if err != nil {
		h.fail(c, err)
		return
	}
	c.JSON(http.StatusOK, h.settingsJSON(cs))
}

// apiCalculatorSettingsPut: PUT /api/v1/admin/calculator/settings
// {"discounts_bps": {"spot": 6000}, "exchange_rates_micros": {"CNY": 140000}}
// — only the keys given change; an exchange rate of 0 removes it.
func (h *Handler) apiCalculatorSettingsPut(c *gin.Context) {
	var body struct {
		DiscountsBps map[string]int64 `json:"discounts_bps"`
		FXMicros     map[string]int64 `json:"exchange_rates_micros"`
		// FXMeta: optional date and source of the rates given.
		FXMeta map[string]models.FXMeta `json:"exchange_rates_meta"`
	}
	if !h.bindJSON(c, &body) {
		return
	}
	ctx := c.Request.Context()
	before, err := h.store.CalculatorSettings(ctx)
	if err != nil {
		h.fail(c, err)
		return
	}
	disc := map[string]*int64{}
	for _, tier := range pricing.DerivedTiers {
		if bps, ok := before.DiscountsBps[tier]; ok {
			disc[tier] = &bps // unchanged unless given
		}
	}
	for tier, bps := range body.DiscountsBps {
		if !calcContains(pricing.DerivedTiers, tier) {
			h.fail(c, &models.ValidationError{Field: "discounts_bps", Message: "tiers are spot, reserved-1y and reserved-3y"})
			return
		}
		disc[tier] = &bps
	}
	meta := map[string]models.FXMeta{}
	for cur, m := range body.FXMeta {
		meta[strings.ToUpper(cur)] = m
	}
	fx := map[string]int64{}
	for cur, m := range body.FXMicros {
		cur = strings.ToUpper(cur)
		if err := plausibleFX(h.cfg.Currency, cur, m); err != nil {
			h.fail(c, err)
			return
		}
		fx[cur] = m
	}
	if err := h.saveCalculatorSettings(c, before, disc, fx, meta); err != nil {
		h.fail(c, err)
		return
	}
	h.apiCalculatorSettings(c)
}

// plausibleFX refuses an API exchange rate 20 times off the shipped one:
// the field is the portal currency's micro-units per one unit of cur,
// while the list GET shows also has rates the other way round ("1 USD =
// 7.2 CNY"), and 7100000 for CNY in a USD portal priced a 1.78 USD lease
// at 91. It compares with the shipped rate, not the one in force: a wrong
// rate in force blocked its own correction (and called the right value
// the mistake). The page checks the same (fxFarFromShipped).
func plausibleFX(portal, cur string, micros int64) error {
	ref, off := fxFarFromShipped(portal, cur, micros)
	if !off {
		return nil
	}
	return &models.ValidationError{Field: "exchange_rates_micros", Message: fmt.Sprintf(
		"%s: %d is %s micro-units per 1 %s (1 %s = %s %s), over 20 times the usual rate (%d): is it the other way round?",
		cur, micros, portal, cur, cur, pricing.Format(micros), portal, ref)}
}

// fxFarFromShipped says whether micros (the portal currency per one unit
// of cur) is over 20 times off the rate the portal ships, and that rate;
// a currency it ships no rate for is never off.
func fxFarFromShipped(portal, cur string, micros int64) (ref int64, off bool) {
	k, ok := pricing.Conversions(portal, nil, pricing.DefaultFXRates)[cur]
	ref = k.PortalMicros()
	return ref, ok && micros > 0 && ref > 0 && (micros > 20*ref || 20*micros < ref)
}

func calcContains(list []string, s string) bool {
	for _, x := range list {
		if x == s {
			return true
		}
	}
	return false
}

func calcRat(a, b int64) *big.Rat { return big.NewRat(a, b) }

// cloudCatalog reads the cloud offers and the calculator settings that
// price their derived tiers and other currencies: every view of the
// catalog needs both.
func (h *Handler) cloudCatalog(ctx context.Context) ([]models.CloudPrice, models.CalculatorSettings, error) {
	rows, err := h.store.ListCloudPrices(ctx)
	if err != nil {
		return nil, models.CalculatorSettings{}, err
	}
	cs, err := h.store.CalculatorSettings(ctx)
	return rows, cs, err
}

// adminFXRates are the admin's rates as calculator rates: one unit of each
// currency in the portal currency, with the date and source given.
func adminFXRates(portal string, cs models.CalculatorSettings) []pricing.FXRate {
	out := make([]pricing.FXRate, 0, len(cs.FXMicros))
	for cur, m := range cs.FXMicros {
		meta := cs.FXMeta[cur]
		out = append(out, pricing.FXRate{From: cur, To: strings.ToUpper(portal), Micros: m, AsOf: meta.AsOf, Source: meta.Source})
	}
	return out
}
