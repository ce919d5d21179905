package handlers

import (
	"encoding/csv"
	"fmt"
	"net/http"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/gin-gonic/gin"

	"workbench/models/pricing"
)

// calcCSVHeader is the export's one table: a long format (one figure a row) so
// that every section fits one header and a spreadsheet can pivot it.
var calcCSVHeader = []string{"section", "item", "metric", "value", "unit", "as_of", "source"}

// calcCSVText keeps a spreadsheet from running text as a formula (catalog rows
// are typed by admins): a leading = + - @ gets a quote.
func calcCSVText(s string) string {
	if s != "" && strings.ContainsRune("=+-@\t\r", rune(s[0])) {
		return "'" + s
	}
	return s
}

// calculatorCSV: GET /calculator.csv?… — the same calculation as the page,
// as CSV. Like every CSV download (scripts fetch them) it refuses a
// parameter it does not read, or one given twice: /calculator.csv?foo=1
// answered 200 where /usage.csv?foo=1 answered 400. The page itself,
// /calculator, stays lenient (docs/ux-choices.md, session 52).
func (h *Handler) calculatorCSV(c *gin.Context) {
	if err := onlyQueryParams(c, calcQueryParams()...); err != nil {
		h.fail(c, err)
		return
	}
	k, err := h.calculate(c, nil)
	if err != nil {
		h.fail(c, err)
		return
	}
	if k.estErrs != nil || k.tcoErrs != nil {
		msg := ""
		if k.estErrs != nil {
			msg = k.estErrs.Error()
		}
		if k.tcoErrs != nil {
			msg = strings.TrimPrefix(msg+"; "+k.tcoErrs.Error(), "; ")
		}
		h.fail(c, newError(http.StatusBadRequest, "invalid_input", "the calculation has errors: "+msg))
		return
	}
	cur := h.cfg.Currency
	var rows [][]string
	add := func(section, item, metric, value, unit, asOf, source string) {
		rows = append(rows, []string{section, calcCSVText(item), metric, value, unit, calcCSVText(asOf), calcCSVText(source)})
	}
	// Exact, as the statement CSVs are: a sheet adds these up, and two
	// decimals are not every currency's (KWD has three), nor a small
	// rate's (0.012345 per core-hour).
	money := func(m int64) string { return pricing.FormatExact(m) }
	rate := money

	r := k.estRes
	add("estimate", "shape", "description", calcCSVText(calcShapeText(nil, r.Input)), "", "", "")
	add("estimate", "duration", "description", calcDurationText(nil, r), "", "", "")
	add("estimate", "duration", "billed_seconds", strconv.FormatInt(r.Runs*r.BilledRunSeconds, 10), "s", "", "")
	add("estimate", "start", "time", r.Start.Format(time.RFC3339), "", "", "")
	for _, l := range r.Resources {
		name, qty, _ := calcResourceLabel(nil, l)
		add("estimate", name, "quantity", qty, "", "", "")
		add("estimate", name, "rate", rate(l.RateMicros), cur+" per "+resourceUnit(l.Resource), "", "")
		add("estimate", name, "per_hour", money(l.PerHour), cur, "", "")
		add("estimate", name, "per_day", money(l.PerDay), cur, "", "")
		add("estimate", name, "per_month", money(l.PerMonth), cur, "", "")
		add("estimate", name, "total", money(l.Total), cur, "", "")
	}
	add("estimate", "total", "per_hour", money(r.PerHour), cur, "", "")
	add("estimate", "total", "per_day", money(r.PerDay), cur, "", "")
	add("estimate", "total", "per_month", money(r.PerMonth), cur, "", "")
	add("estimate", "total", "compute", money(r.ComputeTotal), cur, "", "")
	add("estimate", "total", "storage", money(r.StorageTotal), cur, "", "")
	add("estimate", "total", "total", money(r.Total), cur, "", "")
	for _, o := range k.cloud {
		item := o.Label()
		add("cloud", item, "price_per_gpu_hour", rate(o.PriceMicros), o.Currency, o.AsOf, o.Source)
		add("cloud", item, "rate_per_gpu_hour", rate(o.RateMicros), cur, o.AsOf, o.Source)
		add("cloud", item, "cost", money(o.Cost), cur, o.AsOf, o.Source)
		if o.VsHereOK {
			add("cloud", item, "here_vs_offer_pct", fmt.Sprintf("%.2f", float64(o.VsHereBps)/100), "%", o.AsOf, o.Source)
		}
	}

	t := k.tcoRes
	for _, name := range []string{"gpu_model", "gpus_per_server", "server_price", "depreciation_years", "residual_value",
		"gpu_active_watts", "gpu_idle_watts", "overhead_watts", "pue", "electricity_per_kwh", "colo_per_kw_month",
		"rack_per_month", "maintenance_rate", "staff_per_year", "utilization", "target_utilization", "horizon_years"} {
		add("tco_input", name, "value", calcCSVText(k.tco.Value(name)), "", "", "")
	}
	add("tco", "server", "peak_kw", strconv.FormatFloat(t.PeakKW, 'f', 3, 64), "kW", "", "")
	a := t.Annual
	add("tco", "annual", "energy_kwh", strconv.FormatFloat(a.EnergyKWh, 'f', 1, 64), "kWh", "", "")
	add("tco", "annual", "depreciation", money(a.DepreciationMicros), cur, "", "")
	add("tco", "annual", "energy", money(a.EnergyMicros), cur, "", "")
	add("tco", "annual", "colocation", money(a.ColocationMicros), cur, "", "")
	add("tco", "annual", "maintenance", money(a.MaintenanceMicros), cur, "", "")
	add("tco", "annual", "staff", money(a.StaffMicros), cur, "", "")
	add("tco", "annual", "total", money(a.TotalMicros), cur, "", "")
	add("tco", "owned", "owned_per_gpu_hour", rate(a.OwnedPerGPUHourMicros), cur, "", "")
	for _, u := range t.Table {
		item := "utilization " + calcPct(u.Utilization)
		add("tco_table", item, "annual_cost", money(u.TotalMicros), cur, "", "")
		add("tco_table", item, "owned_per_gpu_hour", rate(u.OwnedPerGPUHourMicros), cur, "", "")
	}
	for _, o := range t.Offers {
		item := o.Label()
		add("break_even", item, "rate_per_gpu_hour", rate(o.RateMicros), cur, o.AsOf, o.Source)
		add("break_even", item, "break_even_utilization", strconv.FormatFloat(o.BreakEvenUtilization, 'f', 4, 64), "fraction", o.AsOf, o.Source)
		months := "never"
		if o.PaysBack {
			months = strconv.FormatFloat(o.BreakEvenMonths, 'f', 1, 64)
		}
		add("break_even", item, "break_even_months", months, "months", o.AsOf, o.Source)
	}
	for _, s := range t.Chart.Series {
		last := s.Points[len(s.Points)-1]
		add("chart", s.Label, fmt.Sprintf("cumulative_at_month_%d", t.Chart.Months[len(t.Chart.Months)-1]), money(last), cur, "", "")
	}
	add("tco", "suggested_rate", "target_utilization", strconv.FormatFloat(t.Target.Utilization, 'f', 4, 64), "fraction", "", "")
	model, _ := k.env.applyModel(k.tco.GPUModel)
	sug, err := k.env.suggestGPURate(model, t.SuggestedRateMicros, time.Now())
	if err != nil {
		h.fail(c, err)
		return
	}
	add("tco", "suggested_rate", "owned_per_gpu_hour_at_target", rate(sug.OwnedMicros), cur, "", "")
	if sug.Flavor != "" {
		add("tco", "suggested_rate", "cpu_memory_share_flavor", sug.Flavor, "", "", "")
		add("tco", "suggested_rate", "cpu_memory_per_gpu_hour", rate(sug.ShareMicros), cur, "", "")
	}
	add("tco", "suggested_rate", "rate_per_gpu_hour", rate(sug.RateMicros), cur, "", "")

	csvHeaders(c, "calculator.csv")
	w := csv.NewWriter(c.Writer)
	_ = w.Write(calcCSVHeader)
	_ = w.WriteAll(rows)
}

// calcQueryParams are the parameters calculate reads: the estimate's (with
// the page's shape_gpu_model), the TCO's and use_measured.
func calcQueryParams() []string {
	return slices.Concat(calcEstimateKeys, []string{"shape_gpu_model", "use_measured"}, pricing.TCOFieldNames())
}
