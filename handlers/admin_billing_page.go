package handlers

import (
	"context"
	"encoding/csv"
	"fmt"
	"net/http"
	"net/url"
	"strconv"
	"time"

	"github.com/gin-gonic/gin"

	"workbench/models"
	"workbench/models/pricing"
	"workbench/templates"
)

// billingGroupings are the overview's groupings, in tab order.
func billingGroupings(c *gin.Context) []templates.ChoiceLink {
	return []templates.ChoiceLink{
		{Value: "user", Label: trc(c, "User")},
		{Value: "group", Label: trc(c, "Group")},
		{Value: "gpu_model", Label: trc(c, "GPU model")},
		{Value: "workbench", Label: trc(c, "Workbench")},
		{Value: "resource", Label: trc(c, "Resource")},
	}
}

// billingQuery reads ?month and ?group_by of the billing pages.
func billingQuery(c *gin.Context, now time.Time) (time.Time, string, error) {
	month, err := parseMonth(c.Query("month"), now)
	if err != nil {
		return month, "", err
	}
	groupBy := c.DefaultQuery("group_by", "user")
	if !models.ValidGrouping(groupBy) {
		return month, "", &models.ValidationError{Field: "group_by", Message: "must be user, group, gpu_model, workbench or resource"}
	}
	return month, groupBy, nil
}

// emptyKeyLabel names the group of lines with no key.
func emptyKeyLabel(c *gin.Context, groupBy string) string {
	switch groupBy {
	case "group":
		return trc(c, "no group")
	case "gpu_model":
		return trc(c, "no GPU (CPU-only workbenches, home storage, credits)")
	case "workbench":
		return trc(c, "no workbench (home storage, credits, bookings)")
	}
	return "—"
}

// adminBilling: GET /admin/billing?month=YYYY-MM&group_by=… — what the
// month cost, per user, group, GPU model, workbench or resource.
func (h *Handler) adminBilling(c *gin.Context) {
	form := templates.CorrectionForm{}
	switch c.Query("done") {
	case "credit":
		form.Done = trc(c, "The credit was appended to the ledger.")
	case "reverse":
		form.Done = trc(c, "The reversing lines were appended to the ledger.")
	}
	elec := templates.ElectricityForm{}
	if c.Query("done") == "electricity" {
		elec.Done = trc(c, "The electricity price was saved.")
	}
	h.renderBillingWith(c, http.StatusOK, form, elec)
}

// renderBilling renders the overview with the corrections form in form.
func (h *Handler) renderBilling(c *gin.Context, status int, form templates.CorrectionForm) {
	h.renderBillingWith(c, status, form, templates.ElectricityForm{})
}

// renderBillingWith renders the overview with the corrections and the
// electricity price forms as given (an empty price field shows the stored one).
func (h *Handler) renderBillingWith(c *gin.Context, status int, form templates.CorrectionForm, elec templates.ElectricityForm) {
	ctx := c.Request.Context()
	form.Errors, elec.Error = trcErrs(c, form.Errors), trcMsg(c, elec.Error)
	if form.Key == "" {
		form.Key = models.RandomSecret(12)
	}
	now := time.Now().UTC()
	month, groupBy, err := billingQuery(c, now)
	if err != nil {
		h.fail(c, err)
		return
	}
	page, err := pageParam(c)
	if err != nil {
		h.fail(c, err)
		return
	}
	items, total, err := h.store.UsageSummary(ctx, month, month.AddDate(0, 1, 0), groupBy, 0)
	if err != nil {
		h.fail(c, err)
		return
	}
	energy, err := h.energyFor(ctx, month, month.AddDate(0, 1, 0), groupBy, 0)
	if err != nil {
		h.fail(c, err)
		return
	}
	items = withEnergyKeys(items, energy)
	if elec.Price == "" && energy.priced {
		elec.Price = plainAmount(energy.price)
	}
	elec.Currency = h.cfg.Currency
	q := url.Values{"month": {month.Format("2006-01")}, "group_by": {groupBy}}
	v := templates.BillingView{Currency: h.cfg.Currency, GroupBy: groupBy, Total: h.amountText(ctx, total),
		Month:  monthNav("/admin/billing", month, now, url.Values{"group_by": {groupBy}}),
		CSVURL: "/admin/billing.csv?" + q.Encode(), Correction: form, Electricity: elec, EnergyPriced: energy.priced,
		TotalKWh: pricing.FormatKWh(energy.total()), TotalEnergyCost: h.energyCostText(ctx, energy, energy.total())}
	for _, o := range billingGroupings(c) {
		oq := url.Values{"month": {month.Format("2006-01")}, "group_by": {o.Value}}
		o.Href, o.Active = "/admin/billing?"+oq.Encode(), o.Value == groupBy
		if o.Active {
			v.GroupLabel = o.Label
		}
		v.Groupings = append(v.Groupings, o)
	}
	var secs int64
	for _, it := range items {
		secs += it.GPUSeconds
	}
	// The totals cover the month; the rows come a page at a time (by
	// workbench, a month can have thousands).
	pages, offset := pager(c, "/admin/billing", page, int64(len(items)))
	charged := chargedTotal(items)
	v.Pages = pages
	for _, it := range items[offset:min(offset+pageSize, len(items))] {
		row := h.billingRow(c, groupBy, it, charged)
		if groupBy == "group" && it.GroupID != 0 {
			// Its statement by member, a deleted group's too.
			row.Href = fmt.Sprintf("/groups/%d/billing?", it.GroupID) + url.Values{"month": {month.Format("2006-01")}}.Encode()
		}
		mJ := energy.mJ[it.Key]
		row.KWh, row.EnergyCost = pricing.FormatKWh(mJ), h.energyCostText(ctx, energy, mJ)
		v.Rows = append(v.Rows, row)
	}
	v.TotalHours = gpuHoursText(secs)
	v.TotalPreemptible = h.preemptibleText(ctx, preemptibleTotal(items))
	if v.Month.Current {
		if live, err := h.wbs.Billing().Accruing(ctx, 0); err != nil {
			h.log.Warn("unbilled usage", "err", err)
		} else if live.AmountMicros > 0 {
			v.Pending = h.amountText(ctx, live.AmountMicros)
		}
	}
	h.render(c, status, templates.AdminBillingPage(h.page(c, trc(c, "Billing")), v))
}

// adminBillingCSV: GET /admin/billing.csv?month&group_by — the overview as CSV.
func (h *Handler) adminBillingCSV(c *gin.Context) {
	if err := onlyQueryParams(c, "month", "group_by"); err != nil {
		h.fail(c, err)
		return
	}
	month, groupBy, err := billingQuery(c, time.Now())
	if err != nil {
		h.fail(c, err)
		return
	}
	items, _, err := h.store.UsageSummary(c.Request.Context(), month, month.AddDate(0, 1, 0), groupBy, 0)
	if err != nil {
		h.fail(c, err)
		return
	}
	energy, err := h.energyFor(c.Request.Context(), month, month.AddDate(0, 1, 0), groupBy, 0)
	if err != nil {
		h.fail(c, err)
		return
	}
	items = withEnergyKeys(items, energy)
	csvHeaders(c, "billing-"+month.Format("2006-01")+"-by-"+groupBy+".csv")
	w := csv.NewWriter(c.Writer)
	// energy_cost_micros is informational (never charged) and empty when
	// no electricity price is set.
	// preemptible_micros: the part of amount_micros billed at the
	// preemptible tier.
	_ = w.Write([]string{"month", groupBy, "gpu_seconds", "gpu_hours", "amount", "amount_micros", "currency",
		"energy_kwh", "energy_mj", "energy_cost_micros", "preemptible_micros"})
	for _, it := range items {
		mJ := energy.mJ[it.Key]
		_ = w.Write([]string{month.Format("2006-01"), csvText(it.Key), strconv.FormatInt(it.GPUSeconds, 10), gpuHoursText(it.GPUSeconds),
			pricing.Micros(it.AmountMicros).Exact(), strconv.FormatInt(it.AmountMicros, 10), h.cfg.Currency,
			pricing.FormatKWh(mJ), strconv.FormatInt(mJ, 10), energy.costCSV(mJ), strconv.FormatInt(it.PreemptibleMicros, 10)})
	}
	w.Flush()
	if err := w.Error(); err != nil {
		h.log.Warn("billing csv", "err", err)
	}
}

// chargedTotal is what the rows with a positive amount add up to: the
// shares are of it, so they stay within 0–100 % and add up to 100 % when a
// credit larger than its row's use makes a row negative (a share of the
// net total read 120 % for one user and −20 % for the credited one).
func chargedTotal(items []models.UsageItem) int64 {
	var sum int64
	for _, it := range items {
		if it.AmountMicros > 0 {
			sum += it.AmountMicros
		}
	}
	return sum
}

// billingRow is one row of a billing summary grouped by groupBy: its
// label ("no group" for the empty key, a resource's name), GPU-hours,
// amount and share of what the rows charged (the admin's overview and a
// group's statement); charged is chargedTotal of all the summary's rows.
func (h *Handler) billingRow(c *gin.Context, groupBy string, it models.UsageItem, charged int64) templates.BillingRow {
	ctx := c.Request.Context()
	label := it.Key
	if label == "" {
		label = emptyKeyLabel(c, groupBy)
	} else if groupBy == "resource" {
		label = templates.ResourceName(ctx, label)
	} else if groupBy == "workbench" {
		label = workbenchLabel(ctx, it, true)
	} else if groupBy == "group" && it.GroupDeleted {
		label = deletedGroupLabel(c, it.GroupName, it.GroupID)
	}
	share := "—"
	if charged > 0 && it.AmountMicros >= 0 {
		share = fmt.Sprintf("%d%%", (it.AmountMicros*100+charged/2)/charged)
	}
	return templates.BillingRow{Key: it.Key, Label: label, GPUHours: gpuHoursText(it.GPUSeconds),
		Amount: h.amountText(ctx, it.AmountMicros), AmountMicros: it.AmountMicros, Share: share,
		Preemptible: h.preemptibleText(ctx, it.PreemptibleMicros)}
}

// preemptibleText is a billing row's part at the preemptible tier: "—"
// for none, so that the rows with some stand out.
func (h *Handler) preemptibleText(ctx context.Context, micros int64) string {
	if micros == 0 {
		return "—"
	}
	return h.amountText(ctx, micros)
}

// preemptibleTotal is what the rows billed at the preemptible tier.
func preemptibleTotal(items []models.UsageItem) int64 {
	var sum int64
	for _, it := range items {
		sum += it.PreemptibleMicros
	}
	return sum
}

// deletedGroupLabel is how a page names the deleted group id, named name:
// the key models.DeletedGroupKey gives it (English: the CSV's and the
// API's), in the reader's language.
func deletedGroupLabel(c *gin.Context, name string, id int64) string {
	return trc(c, "%s (deleted group %d)", name, id)
}
