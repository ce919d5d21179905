package handlers

import (
	"context"
	"encoding/csv"
	"fmt"
	"net/http"
	"net/url"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/gin-gonic/gin"

	"workbench/handlers/proxy"
	"workbench/models"
	"workbench/models/pricing"
	"workbench/orchestrator"
	"workbench/templates"
	"workbench/templates/i18n"
)

// usagePage: GET /usage?month=YYYY-MM — the user's quota bars and the
// month's statement.
func (h *Handler) usagePage(c *gin.Context) {
	ctx := c.Request.Context()
	u := currentUser(c)
	now := time.Now().UTC()
	month, err := parseMonth(c.Query("month"), now)
	if err != nil {
		h.fail(c, err)
		return
	}
	page, err := pageParam(c)
	if err != nil {
		h.fail(c, err)
		return
	}
	st, err := h.quotaStatusOf(c, u)
	if err != nil {
		h.fail(c, err)
		return
	}
	end := month.AddDate(0, 1, 0)
	summary, total, err := h.store.UsageSummary(ctx, month, end, "workbench", u.ID)
	if err != nil {
		h.fail(c, err)
		return
	}
	// The summary above covers the month; the lines come a page at a time.
	offset := (page - 1) * pageSize
	lines, totalLines, err := h.store.StatementPage(ctx, u.ID, month, end, offset, pageSize)
	if err != nil {
		h.fail(c, err)
		return
	}
	if offset > 0 && len(lines) == 0 && totalLines > 0 { // past the end: show the last page
		p, last := pager(c, "/usage", page, totalLines)
		page = p.Page
		if lines, totalLines, err = h.store.StatementPage(ctx, u.ID, month, end, last, pageSize); err != nil {
			h.fail(c, err)
			return
		}
	}
	names, err := h.store.WorkbenchNamesOf(ctx, u.ID) // deleted ones too: their lines are on the statement
	if err != nil {
		h.fail(c, err)
		return
	}
	energy, err := h.energyFor(ctx, month, end, "workbench", u.ID)
	if err != nil {
		h.fail(c, err)
		return
	}
	summary = withEnergyKeys(summary, energy)
	led, err := h.store.GroupsLedBy(ctx, u.ID)
	if err != nil {
		h.fail(c, err)
		return
	}
	q := st.Quota
	amount := h.amountFor(ctx)
	// The spend bar and its set-aside note compare against the budget:
	// written as the banner and the refusals write them.
	_, atLeast := h.limitAmountsFor(ctx)
	warnings := make([]string, 0, len(st.Warnings))
	for _, w := range st.Warnings {
		warnings = append(warnings, quotaText(ctx, w))
	}
	v := templates.UsageView{Currency: h.cfg.Currency, Warnings: warnings, LimitReached: quotaText(ctx, st.LimitReached),
		Month:  monthNav("/usage", month, now, nil),
		CSVURL: "/usage.csv?month=" + month.Format("2006-01"), Total: amount(total),
		Bars: []templates.QuotaBar{
			quotaBar("gpus", i18n.Key("GPUs in use"), int64(st.GPUsInUse), q.MaxGPUs, countText),
			quotaBar("workbenches", i18n.Key("Active workbenches"), int64(st.Workbenches), q.MaxWorkbenches, countText),
			quotaBar("gpu-hours", i18n.Key("GPU-hours this month"), st.MonthGPUSecs, hoursToSeconds(q.GPUHoursPerMonth), gpuHoursText),
			quotaBar("spend", i18n.Key("Spend this month"), st.MonthSpend, q.BudgetPerMonthMicros, h.spentOf(ctx, q.BudgetPerMonthMicros)),
		}}
	// The per-model caps follow "GPUs in use" (Bars[3] stays the spend).
	v.Bars = slices.Insert(v.Bars, 1, perModelBars(ctx, q, st.GPUsInUseByModel)...)
	if st.MonthCredit < 0 {
		// A credit gives budget back, so the spend can read below zero:
		// say what is in the figure.
		v.Bars[len(v.Bars)-1].Note = i18n.T(ctx, "After %s of credits this month.", amount(-st.MonthCredit))
	}
	if st.BookingSetAside > 0 && v.Month.Current {
		// Launches off the bookings are refused beside it: say so before
		// a launch does.
		aside := i18n.T(ctx, "Your bookings would bill %s for their unused time this month (unused booked time is billed): it is set aside of the budget, and launches and runs off your bookings must fit beside it.", atLeast(st.BookingSetAside))
		bar := &v.Bars[len(v.Bars)-1]
		bar.Note = strings.TrimSpace(bar.Note + " " + aside)
	}
	// Home storage last: the notes above go under the spend.
	v.Bars = append(v.Bars, quotaBar("storage", i18n.Key("Home storage (GiB)"), st.StorageUsed, gibToMilli(q.MaxStorageGiB), models.GiBText))
	if st.StorageOver {
		v.Bars[len(v.Bars)-1].Note = i18n.T(ctx, "Over your quota, as last measured: launches and starts with GPUs are refused until you delete files or a workbench's data; a workbench without GPU still starts, so you can. Running workbenches keep running.")
	}
	var totalSecs int64
	for _, it := range summary {
		totalSecs += it.GPUSeconds
		mJ := energy.mJ[it.Key]
		name := workbenchLabel(ctx, it, false)
		if name == "" {
			name = i18n.T(ctx, "no workbench (home storage, credits, bookings)")
		}
		v.Summary = append(v.Summary, templates.StatementGroup{Name: name, GPUHours: gpuHoursText(it.GPUSeconds), Amount: amount(it.AmountMicros),
			KWh: pricing.FormatKWh(mJ), EnergyCost: h.energyCostText(ctx, energy, mJ)})
	}
	// Whole GPUs held: the GPU-hours bar's figure this month (ledger plus
	// the running part, to the second), the statement's in a past month.
	// The per-minute rollup trailed it by the minute in progress, so the
	// page read 0.03 in the bar and 0.02 "held" at the same moment.
	wholeSecs := totalSecs
	if v.Month.Current {
		wholeSecs = st.MonthGPUSecs
	}
	if rep, err := h.wbs.Utilisation(ctx, month, end, "month", u.ID); err != nil {
		if !proxy.ClientGone(c.Request, err) { // a reader who left is not a warning (issue 15)
			h.log.Warn("held vs used", "user", u.Username, "err", err)
		}
	} else {
		v.HeldVsUsed = h.heldVsUsed(wholeSecs, rep.Total, amount)
		var unitMs int64 // unit-hours: MIG instances and slices, not GPU-hours
		for _, r := range rep.ByUnit {
			unitMs += r.AllocatedMs
		}
		if rep.Total.UnitHeldMs > 0 && unitMs > 0 {
			v.HeldVsUsed.UnitGPUHours, v.HeldVsUsed.UnitHours = heldHoursText(rep.Total.UnitHeldMs), heldHoursText(unitMs)
		}
	}
	v.EnergyPriced, v.TotalKWh, v.TotalEnergyCost = energy.priced, pricing.FormatKWh(energy.total()), h.energyCostText(ctx, energy, energy.total())
	v.TotalHours = gpuHoursText(totalSecs)
	if v.Month.Current && st.MonthAccruing > 0 {
		// Priced with the spend bar's figure, in the same snapshot: the
		// pending amount and the bar agree, and the page prices the
		// running workbenches once.
		v.Pending = amount(st.MonthAccruing)
	}
	v.LinePages, _ = pager(c, "/usage", page, totalLines)
	for _, l := range lines {
		v.Lines = append(v.Lines, h.statementLine(ctx, l, names, amount))
	}
	for _, g := range led {
		v.LedGroups = append(v.LedGroups, templates.GroupLink{Name: g.Name, Href: fmt.Sprintf("/groups/%d/billing?month=%s", g.ID, month.Format("2006-01"))})
	}
	h.render(c, http.StatusOK, templates.UsagePage(h.page(c, i18n.T(ctx, "Usage")), v))
}

// statementLine is ledger line l as the statement shows it to a reader of
// lc's language (the resource is named by the template).
func (h *Handler) statementLine(lc context.Context, l models.LedgerEntry, names map[string]string, amount func(int64) string) templates.StatementLine {
	line := templates.StatementLine{Period: periodText(l.PeriodStart, l.PeriodEnd), Workbench: nameOf(names, l.WorkbenchID),
		Resource: l.Resource, GPUModel: unitModelOf(l), Duration: secondsText(l.Seconds), Quantity: quantityText(lc, l.Resource, l.QuantityMilli),
		Rate:   pricing.FormatRate(l.RateMicros) + " / " + i18n.T(lc, resourceUnit(l.Resource)),
		Amount: amount(l.AmountMicros), Reversal: l.Reverses != nil, Note: l.Note, ID: l.ID, Preemptible: l.Tier == pricing.TierPreemptible}
	if l.Reverses != nil {
		line.Reverses = *l.Reverses
	}
	if l.Resource == models.ResourceCredit {
		// Money given back: no time, quantity or rate ("0:00:00, 0 GiB,
		// 0.00 / unit-hour" read as if something had been metered).
		line.Duration, line.Rate = "—", "—"
	}
	return line
}

// workbenchLabel is the page's name of a usage row grouped by workbench:
// its key, but a deleted workbench's "(deleted, id)" in the reader's
// language (withOwner: "owner/" first, as in everyone's rows). The CSVs
// keep the key, in English (docs/ux-choices.md, session 52).
func workbenchLabel(lc context.Context, it models.UsageItem, withOwner bool) string {
	if !it.Deleted {
		return it.Key
	}
	label := i18n.T(lc, "%s (deleted, %s)", it.WorkbenchName, it.WorkbenchID)
	if withOwner {
		label = it.Owner + "/" + label
	}
	return label
}

func nameOf(names map[string]string, id string) string {
	if n, ok := names[id]; ok {
		return n
	}
	return id
}

// usageCSVHeader is the column list of /usage.csv: amounts both as exact
// decimals of the major unit and as integer micro-units. New columns go
// at the end (scripts read the file by position): tier is the price tier
// of the rate, "preemptible" or empty (apiLedgerLine's Tier).
var usageCSVHeader = []string{"period_start", "period_end", "workbench", "workbench_id", "resource", "gpu_model",
	"seconds", "quantity", "rate", "amount", "quantity_milli", "rate_micros", "amount_micros", "currency", "note",
	"id", "reverses", "created_by", "tier"}

// usageCSV: GET /usage.csv?month=YYYY-MM — the user's ledger lines.
func (h *Handler) usageCSV(c *gin.Context) {
	ctx := c.Request.Context()
	u := currentUser(c)
	if err := onlyQueryParams(c, "month"); err != nil {
		h.fail(c, err)
		return
	}
	month, err := parseMonth(c.Query("month"), time.Now())
	if err != nil {
		h.fail(c, err)
		return
	}
	names, err := h.store.WorkbenchNamesOf(ctx, u.ID) // deleted ones too: their lines are on the statement
	if err != nil {
		h.fail(c, err)
		return
	}
	csvHeaders(c, "usage-"+u.Username+"-"+month.Format("2006-01")+".csv")
	// Streamed: each line is read from the database and written out in
	// turn (csv.Writer buffers 4 KiB), never the whole month in memory.
	w := csv.NewWriter(c.Writer)
	_ = w.Write(usageCSVHeader)
	err = h.store.EachStatementLine(ctx, u.ID, month, month.AddDate(0, 1, 0), func(l *models.LedgerEntry) error {
		return w.Write([]string{l.PeriodStart.UTC().Format(time.RFC3339), l.PeriodEnd.UTC().Format(time.RFC3339),
			csvText(nameOf(names, l.WorkbenchID)), csvText(l.WorkbenchID), l.Resource, csvText(l.GPUModel),
			strconv.FormatInt(l.Seconds, 10), milliText(l.QuantityMilli), pricing.Micros(l.RateMicros).Exact(), pricing.Micros(l.AmountMicros).Exact(),
			strconv.FormatInt(l.QuantityMilli, 10), strconv.FormatInt(l.RateMicros, 10), strconv.FormatInt(l.AmountMicros, 10),
			h.cfg.Currency, csvText(l.Note), strconv.FormatInt(l.ID, 10), reversesText(l.Reverses), csvText(l.CreatedBy), l.Tier})
	})
	w.Flush()
	if err == nil {
		err = w.Error()
	}
	if err != nil && !proxy.ClientGone(c.Request, err) {
		// Headers are out: the download ends short, and the log says why.
		h.log.Warn("usage csv", "err", err)
	}
}

// csvHeaders starts a CSV download named filename. One downloaded from a
// page (no Authorization header) starts with the UTF-8 byte-order mark:
// without it Excel on Chinese Windows reads the file in the local code
// page and garbles group names and reasons. A script with a token gets
// the bytes alone, as CSV readers expect.
func csvHeaders(c *gin.Context, filename string) {
	c.Header("Content-Type", "text/csv; charset=utf-8")
	c.Header("Content-Disposition", `attachment; filename="`+url.PathEscape(filename)+`"`)
	c.Header("Cache-Control", "no-store")
	c.Status(http.StatusOK)
	if c.GetHeader("Authorization") == "" {
		_, _ = c.Writer.WriteString(utf8BOM)
	}
}

// utf8BOM is the byte-order mark a spreadsheet reads a CSV's encoding by.
const utf8BOM = "\ufeff"

// reversesText is the id of the line a reversal cancels ("" otherwise).
func reversesText(id *int64) string {
	if id == nil {
		return ""
	}
	return strconv.FormatInt(*id, 10)
}

// usageSummaryCSV: GET /usage-summary.csv?month=YYYY-MM — the user's month
// per workbench: GPU-seconds, amount, and the measured energy with its
// informational cost (empty without an electricity price).
func (h *Handler) usageSummaryCSV(c *gin.Context) {
	ctx := c.Request.Context()
	u := currentUser(c)
	if err := onlyQueryParams(c, "month"); err != nil {
		h.fail(c, err)
		return
	}
	month, err := parseMonth(c.Query("month"), time.Now())
	if err != nil {
		h.fail(c, err)
		return
	}
	end := month.AddDate(0, 1, 0)
	items, _, err := h.store.UsageSummary(ctx, month, end, "workbench", u.ID)
	if err != nil {
		h.fail(c, err)
		return
	}
	energy, err := h.energyFor(ctx, month, end, "workbench", u.ID)
	if err != nil {
		h.fail(c, err)
		return
	}
	items = withEnergyKeys(items, energy)
	csvHeaders(c, "usage-summary-"+u.Username+"-"+month.Format("2006-01")+".csv")
	w := csv.NewWriter(c.Writer)
	_ = w.Write([]string{"month", "workbench", "gpu_seconds", "amount", "amount_micros", "currency", "energy_kwh", "energy_mj", "energy_cost_micros"})
	for _, it := range items {
		mJ := energy.mJ[it.Key]
		_ = w.Write([]string{month.Format("2006-01"), csvText(it.Key), strconv.FormatInt(it.GPUSeconds, 10), exactAmount(it.AmountMicros),
			strconv.FormatInt(it.AmountMicros, 10), h.cfg.Currency, pricing.FormatKWh(mJ), strconv.FormatInt(mJ, 10), energy.costCSV(mJ)})
	}
	w.Flush()
	if err := w.Error(); err != nil {
		h.log.Warn("usage summary csv", "err", err)
	}
}

// heldVsUsed is a user's GPU time held against the time it was busy.
//
// Held is one quantity with one source per kind of unit: whole GPUs are
// wholeSecs, the billing's GPU-seconds (what the GPU-hours bar and the
// statement count, to the second); MIG instances and slices, which the
// GPU-hours quota leaves out and the ledger bills in unit-hours without
// their share of a GPU, are the telemetry's fractions of a GPU (f's
// UnitHeldMs). Used is a measurement, so it stays the telemetry's, beside
// the held time it measured (completed minutes only): the page names
// that figure apart instead of passing it off as the held one.
func (h *Handler) heldVsUsed(wholeSecs int64, f orchestrator.UtilFigures, amount func(int64) string) templates.HeldVsUsedView {
	heldMs := max(wholeSecs, 0)*1000 + f.UnitHeldMs
	if heldMs == 0 && f.AllocatedMs == 0 {
		return templates.HeldVsUsedView{}
	}
	v := templates.HeldVsUsedView{Known: true, Held: heldHoursText(heldMs), Measured: heldHoursText(f.AllocatedMs),
		Used: heldHoursText(f.BusyMs), UsedPercent: f.UsedPercent()}
	if f.UnreadHeldMs > 0 {
		v.Unread = heldHoursText(f.UnreadHeldMs)
	}
	v.NoneMeasured = f.AllocatedMs == 0
	v.NoneRead = !v.NoneMeasured && f.UnreadHeldMs >= f.AllocatedMs
	if c := f.HeldIdleCostMicros(); c > 0 {
		v.IdleCost = amount(c)
	}
	return v
}

// heldHoursText renders GPU-milliseconds as GPU-hours with two decimals,
// as the quota bar's GPU-hours on the same page: one decimal read "held
// 0.0 GPU-hours" beside an idle part that cost money.
func heldHoursText(ms int64) string { return gpuHoursText((ms + 500) / 1000) }

// unitModelOf is the model a statement line shows beside its resource: a
// unit's or a booking's. CPU and memory lines carry their run's unit model
// too (for billing by GPU model), which beside "CPU" would read as a
// second GPU charge.
func unitModelOf(l models.LedgerEntry) string {
	if l.Resource == pricing.CPU || l.Resource == pricing.Memory {
		return ""
	}
	return l.GPUModel
}
