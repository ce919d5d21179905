package handlers

import (
	"encoding/csv"
	"net/http"
	"net/url"
	"strconv"
	"time"

	"github.com/gin-gonic/gin"

	"workbench/models"
	"workbench/models/pricing"
	"workbench/templates"
)

// maxStatementLines bounds the lines the Usage page shows; the CSV has all.
const maxStatementLines = 1000

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
	lines, err := h.store.Statement(ctx, u.ID, month, end)
	if err != nil {
		h.fail(c, err)
		return
	}
	names, err := h.workbenchNames(c, u.ID)
	if err != nil {
		h.fail(c, err)
		return
	}
	q := st.Quota
	v := templates.UsageView{Currency: h.cfg.Currency, Warnings: st.Warnings, LimitReached: st.LimitReached,
		Month:  monthNav("/usage", month, now, nil),
		CSVURL: "/usage.csv?month=" + month.Format("2006-01"), Total: h.amountText(total),
		Bars: []templates.QuotaBar{
			quotaBar("gpus", "GPUs in use", int64(st.GPUsInUse), q.MaxGPUs, countText),
			quotaBar("workbenches", "Active workbenches", int64(st.Workbenches), q.MaxWorkbenches, countText),
			quotaBar("gpu-hours", "GPU-hours this month", st.MonthGPUSecs, hoursToSeconds(q.GPUHoursPerMonth), gpuHoursText),
			quotaBar("spend", "Spend this month", st.MonthSpend, q.BudgetPerMonthMicros, h.amountText),
		}}
	var totalSecs int64
	for _, it := range summary {
		totalSecs += it.GPUSeconds
		v.Summary = append(v.Summary, templates.StatementGroup{Name: it.Key, GPUHours: gpuHoursText(it.GPUSeconds), Amount: h.amountText(it.AmountMicros)})
	}
	v.TotalHours = gpuHoursText(totalSecs)
	if v.Month.Current {
		if live, err := h.wbs.Billing().Unbilled(ctx, u.ID, ""); err == nil && live.AmountMicros > 0 {
			v.Pending = h.amountText(live.AmountMicros)
		} else if err != nil {
			h.log.Warn("unbilled usage", "user", u.Username, "err", err)
		}
	}
	for i, l := range lines {
		if i == maxStatementLines {
			v.LinesHidden = len(lines) - i
			break
		}
		v.Lines = append(v.Lines, h.statementLine(l, names))
	}
	h.render(c, http.StatusOK, templates.UsagePage(h.page(c, "Usage"), v))
}

func (h *Handler) statementLine(l models.LedgerEntry, names map[string]string) templates.StatementLine {
	return templates.StatementLine{Period: periodText(l.PeriodStart, l.PeriodEnd), Workbench: nameOf(names, l.WorkbenchID),
		Resource: l.Resource, GPUModel: l.GPUModel, Duration: secondsText(l.Seconds), Quantity: quantityText(l.Resource, l.QuantityMilli),
		Rate:   pricing.FormatRate(l.RateMicros) + " / " + resourceUnit(l.Resource),
		Amount: h.amountText(l.AmountMicros), Reversal: l.Reverses != nil, Note: l.Note, ID: l.ID}
}

// workbenchNames maps workbench ids to names (ownerID 0: everyone's).
// Deleted workbenches are not listed; their lines show the id.
func (h *Handler) workbenchNames(c *gin.Context, ownerID int64) (map[string]string, error) {
	wbs, err := h.store.ListWorkbenches(c.Request.Context(), ownerID)
	if err != nil {
		return nil, err
	}
	out := make(map[string]string, len(wbs))
	for _, w := range wbs {
		out[w.ID] = w.Name
	}
	return out, nil
}

func nameOf(names map[string]string, id string) string {
	if n, ok := names[id]; ok {
		return n
	}
	return id
}

// usageCSVHeader is the column list of /usage.csv: amounts both as exact
// decimals of the major unit and as integer micro-units.
var usageCSVHeader = []string{"period_start", "period_end", "workbench", "workbench_id", "resource", "gpu_model",
	"seconds", "quantity", "rate", "amount", "quantity_milli", "rate_micros", "amount_micros", "currency", "note",
	"id", "reverses", "created_by"}

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
	lines, err := h.store.Statement(ctx, u.ID, month, month.AddDate(0, 1, 0))
	if err != nil {
		h.fail(c, err)
		return
	}
	names, err := h.workbenchNames(c, u.ID)
	if err != nil {
		h.fail(c, err)
		return
	}
	csvHeaders(c, "usage-"+u.Username+"-"+month.Format("2006-01")+".csv")
	w := csv.NewWriter(c.Writer)
	_ = w.Write(usageCSVHeader)
	for _, l := range lines {
		_ = w.Write([]string{l.PeriodStart.UTC().Format(time.RFC3339), l.PeriodEnd.UTC().Format(time.RFC3339),
			csvText(nameOf(names, l.WorkbenchID)), csvText(l.WorkbenchID), l.Resource, csvText(l.GPUModel),
			strconv.FormatInt(l.Seconds, 10), milliText(l.QuantityMilli), pricing.Micros(l.RateMicros).Exact(), pricing.Micros(l.AmountMicros).Exact(),
			strconv.FormatInt(l.QuantityMilli, 10), strconv.FormatInt(l.RateMicros, 10), strconv.FormatInt(l.AmountMicros, 10),
			h.cfg.Currency, csvText(l.Note), strconv.FormatInt(l.ID, 10), reversesText(l.Reverses), csvText(l.CreatedBy)})
	}
	w.Flush()
	if err := w.Error(); err != nil {
		h.log.Warn("usage csv", "err", err)
	}
}

// csvHeaders starts a CSV download named filename.
func csvHeaders(c *gin.Context, filename string) {
	c.Header("Content-Type", "text/csv; charset=utf-8")
	c.Header("Content-Disposition", `attachment; filename="`+url.PathEscape(filename)+`"`)
	c.Header("Cache-Control", "no-store")
	c.Status(http.StatusOK)
}

// reversesText is the id of the line a reversal cancels ("" otherwise).
func reversesText(id *int64) string {
	if id == nil {
		return ""
	}
	return strconv.FormatInt(*id, 10)
}
