package handlers

import (
	"context"
	"encoding/csv"
	"errors"
	"fmt"
	"net/http"
	"net/url"
	"strconv"
	"time"

	"github.com/gin-gonic/gin"

	"workbench/models"
	"workbench/models/pricing"
	"workbench/orchestrator"
	"workbench/templates"
)

// utilisationDefaultDays is the default span of the dashboard: the last
// 30 days (the rollup keeps 35 by default).
const utilisationDefaultDays = 30

// utilisationQuery reads ?bucket=day|week|month&from&to (YYYY-MM-DD, to
// exclusive; default: the 30 days up to the end of today, UTC).
func utilisationQuery(c *gin.Context, now time.Time) (from, to time.Time, bucket string, err error) {
	bucket = c.DefaultQuery("bucket", "day")
	ok := false
	for _, b := range orchestrator.UtilBuckets {
		ok = ok || b == bucket
	}
	if !ok {
		return from, to, bucket, &models.ValidationError{Field: "bucket", Message: "must be day, week or month"}
	}
	to = orchestrator.BucketStart(now, "day").AddDate(0, 0, 1)
	from = to.AddDate(0, 0, -utilisationDefaultDays)
	parse := func(field, v string, def time.Time) (time.Time, error) {
		if v == "" {
			return def, nil
		}
		t, err := time.Parse("2006-01-02", v)
		if err != nil {
			return def, &models.ValidationError{Field: field, Message: "use YYYY-MM-DD"}
		}
		return t.UTC(), nil
	}
	if from, err = parse("from", c.Query("from"), from); err != nil {
		return
	}
	if to, err = parse("to", c.Query("to"), to); err != nil {
		return
	}
	if !to.After(from) {
		err = &models.ValidationError{Field: "to", Message: "must be after from"}
	} else if to.Sub(from) > 400*24*time.Hour {
		err = &models.ValidationError{Field: "from", Message: "at most 400 days at a time"}
	}
	return
}

// adminUtilisation: GET /admin/utilisation?bucket&from&to — unit-hours
// available, allocated and busy, and the cost of idle capacity (SPEC §6
// rule 9: reported, not charged), per bucket, GPU model, user and group.
func (h *Handler) adminUtilisation(c *gin.Context) {
	from, to, bucket, err := utilisationQuery(c, time.Now())
	var ve *models.ValidationError
	if errors.As(err, &ve) {
		// The period as typed comes back with the message beside it, so
		// the dates picked are not lost.
		v := templates.UtilisationView{Bucket: c.Query("bucket"), Buckets: orchestrator.UtilBuckets, From: c.Query("from"), To: c.Query("to"),
			Errors: templates.FormErrors{ve.Field: trcMsg(c, ve.Message)}}
		h.render(c, http.StatusBadRequest, templates.AdminUtilisationPage(h.page(c, trc(c, "Utilisation")), v))
		return
	}
	if err != nil {
		h.fail(c, err)
		return
	}
	ctx := c.Request.Context()
	rep, err := h.wbs.Utilisation(ctx, from, to, bucket, 0)
	if err != nil {
		h.fail(c, err)
		return
	}
	q := url.Values{"bucket": {bucket}, "from": {from.Format("2006-01-02")}, "to": {to.Format("2006-01-02")}}
	v := templates.UtilisationView{Bucket: bucket, Buckets: orchestrator.UtilBuckets, From: q.Get("from"), To: q.Get("to"),
		Currency: h.cfg.Currency, CSVURL: "/admin/utilisation.csv?" + q.Encode(), Total: h.utilRowView(ctx, orchestrator.UtilRow{Key: "Total", UtilFigures: rep.Total}),
		Chart: utilChart(c, rep)}
	for _, r := range rep.Buckets {
		v.ByBucket = append(v.ByBucket, h.utilRowView(ctx, r))
	}
	for _, r := range rep.ByModel {
		row := h.utilRowView(ctx, r)
		if r.Key == "" {
			row.Label = trc(c, "unknown model") // rows rolled up before the model was recorded, of a GPU no longer present
		}
		v.ByModel = append(v.ByModel, row)
	}
	for _, r := range rep.ByUser {
		v.ByUser = append(v.ByUser, h.utilRowView(ctx, r))
	}
	for _, r := range rep.ByGroup {
		row := h.utilRowView(ctx, r)
		if r.Key == "" {
			row.Label = trc(c, "no group")
		}
		v.ByGroup = append(v.ByGroup, row)
	}
	for _, r := range rep.TopIdle {
		v.TopIdle = append(v.TopIdle, h.utilRowView(ctx, r))
	}
	v.IdleThreshold = int(rep.IdleThresholdPercent)
	for _, r := range rep.ByGPU {
		spark := make([]float64, 0, len(r.BucketAvailableMs))
		for i, avail := range r.BucketAvailableMs {
			if avail > 0 {
				spark = append(spark, 100*float64(r.BucketBusyMs[i])/float64(avail))
			}
		}
		v.ByGPU = append(v.ByGPU, templates.UtilGPURowView{UtilRowView: h.utilRowView(ctx, r), Model: r.Model,
			Spark: templates.SparklinePoints(spark, 100, 120, 24)})
	}
	for _, u := range rep.ByUnit {
		row := h.utilRowView(ctx, orchestrator.UtilRow{Key: u.UnitUUID + "/" + u.Holder, UtilFigures: u.UtilFigures})
		row.Label = u.UnitUUID
		if u.Kind != models.UnitMIG {
			row.Label = u.GPUUUID
		}
		v.ByUnit = append(v.ByUnit, templates.UtilUnitRowView{UtilRowView: row, Kind: u.Kind, GPU: u.GPUUUID, Profile: u.Profile, Holder: u.Holder})
	}
	h.render(c, http.StatusOK, templates.AdminUtilisationPage(h.page(c, trc(c, "Utilisation")), v))
}

// gpuHoursMs renders GPU-milliseconds as hours with one decimal.
func gpuHoursMs(ms int64) string {
	tenths := (ms + 180_000) / 360_000
	return fmt.Sprintf("%d.%d", tenths/10, tenths%10)
}

func pctOf(part, whole int64) string {
	if whole <= 0 {
		return "—"
	}
	return strconv.FormatInt((part*100+whole/2)/whole, 10) + "%"
}

func (h *Handler) utilRowView(ctx context.Context, r orchestrator.UtilRow) templates.UtilRowView {
	return templates.UtilRowView{Key: r.Key, Label: r.Key, Available: gpuHoursMs(r.AvailableMs), Allocated: gpuHoursMs(r.AllocatedMs),
		AllocatedPct: pctOf(r.AllocatedMs, r.AvailableMs), Busy: gpuHoursMs(r.BusyMs), BusyPct: pctOf(r.BusyMs, r.AllocatedMs-r.UnreadHeldMs),
		IdleHeld: gpuHoursMs(r.IdleHeldMs()), Unread: gpuHoursMs(r.UnreadHeldMs),
		UnheldCost: h.amountText(ctx, r.UnheldCostMicros()), HeldIdleCost: h.amountText(ctx, r.HeldIdleCostMicros()),
		HeldLow: gpuHoursMs(r.HeldLowMs), HeldLowCost: h.amountText(ctx, r.HeldLowCostMicros()), Energy: utilEnergyText(r.UtilFigures)}
}

// utilEnergyText is a row's measured energy in kWh, "" where none was
// measured (never 0; the page says "not measured" in the reader's language).
func utilEnergyText(f orchestrator.UtilFigures) string {
	if f.EnergyMinutes == 0 {
		return ""
	}
	return pricing.FormatKWh(f.EnergyMJ)
}

// Chart geometry (SVG user units).
const (
	utilChartW, utilChartH = 720, 260
	utilPlotX0, utilPlotX1 = 56, 708
	utilPlotY0, utilPlotY1 = 12, 220
)

// utilChart stacks each bucket's available hours: busy, held idle, held
// unread, unheld.
func utilChart(c *gin.Context, rep orchestrator.UtilReport) templates.UtilChartView {
	ch := templates.UtilChartView{Width: utilChartW, Height: utilChartH, X0: utilPlotX0, X1: utilPlotX1, Y0: utilPlotY0, Y1: utilPlotY1}
	var maxMs int64
	for _, b := range rep.Buckets {
		maxMs = max(maxMs, b.AvailableMs)
	}
	ch.YMax = gpuHoursMs(maxMs)
	if maxMs < 36_000_000 { // under 10 h: two decimals, or a short range reads "0.0"
		ch.YMax = fmt.Sprintf("%.2f", float64(maxMs)/3_600_000)
	}
	n := len(rep.Buckets)
	if n == 0 || maxMs == 0 {
		ch.Empty = true
		return ch
	}
	slot := float64(utilPlotX1-utilPlotX0) / float64(n)
	scale := float64(utilPlotY1-utilPlotY0) / float64(maxMs)
	labelEvery := max(1, n/12)
	for i, b := range rep.Buckets {
		bar := templates.UtilBar{X: utilPlotX0 + slot*float64(i) + slot*0.1, W: slot * 0.8, Label: b.Start.Format("01-02"),
			ShowLabel: i%labelEvery == 0}
		y := float64(utilPlotY1)
		for _, s := range []struct {
			ms    int64
			class string
			name  string
		}{
			{b.BusyMs, "busy", trc(c, "busy")},
			{b.IdleHeldMs(), "idle", trc(c, "held but idle")},
			{b.UnreadHeldMs, "unread", trc(c, "held, could not read")},
			{b.AvailableMs - b.AllocatedMs, "unheld", trc(c, "nobody held")},
		} {
			if s.ms <= 0 {
				continue
			}
			hgt := float64(s.ms) * scale
			y -= hgt
			bar.Segments = append(bar.Segments, templates.UtilSegment{Y: y, H: hgt, Class: s.class,
				Title: trc(c, "%s: %s GPU-hours %s", b.Key, gpuHoursMs(s.ms), s.name)})
		}
		ch.Bars = append(ch.Bars, bar)
	}
	return ch
}

// adminUtilisationCSV: GET /admin/utilisation.csv?bucket&from&to — every
// table of the dashboard, one section per row kind; costs in micro-units.
func (h *Handler) adminUtilisationCSV(c *gin.Context) {
	if err := onlyQueryParams(c, "bucket", "from", "to"); err != nil {
		h.fail(c, err)
		return
	}
	from, to, bucket, err := utilisationQuery(c, time.Now())
	if err != nil {
		h.fail(c, err)
		return
	}
	rep, err := h.wbs.Utilisation(c.Request.Context(), from, to, bucket, 0)
	if err != nil {
		h.fail(c, err)
		return
	}
	csvHeaders(c, "utilisation-"+from.Format("2006-01-02")+"-"+to.Format("2006-01-02")+"-by-"+bucket+".csv")
	w := csv.NewWriter(c.Writer)
	_ = w.Write([]string{"section", "key", "available_gpu_hours", "allocated_gpu_hours", "busy_gpu_hours", "held_idle_gpu_hours",
		"held_unread_gpu_hours", "unheld_cost_micros", "held_idle_cost_micros", "currency",
		"held_below_threshold_hours", "held_below_threshold_cost_micros", "energy_mj", "gpu_model", "unit_kind", "unit_profile", "holder"})
	writeRow := func(section, key string, f orchestrator.UtilFigures, extra ...string) {
		energy := "" // not measured: empty, never 0
		if f.EnergyMinutes > 0 {
			energy = strconv.FormatInt(f.EnergyMJ, 10)
		}
		rec := []string{section, csvText(key), gpuHoursMs(f.AvailableMs), gpuHoursMs(f.AllocatedMs), gpuHoursMs(f.BusyMs),
			gpuHoursMs(f.IdleHeldMs()), gpuHoursMs(f.UnreadHeldMs), strconv.FormatInt(f.UnheldCostMicros(), 10),
			strconv.FormatInt(f.HeldIdleCostMicros(), 10), h.cfg.Currency,
			gpuHoursMs(f.HeldLowMs), strconv.FormatInt(f.HeldLowCostMicros(), 10), energy}
		for len(extra) < 4 {
			extra = append(extra, "")
		}
		for _, e := range extra {
			rec = append(rec, csvText(e))
		}
		_ = w.Write(rec)
	}
	write := func(section string, r orchestrator.UtilRow) { writeRow(section, r.Key, r.UtilFigures) }
	write("total", orchestrator.UtilRow{Key: from.Format("2006-01-02") + "/" + to.Format("2006-01-02"), UtilFigures: rep.Total})
	for _, r := range rep.Buckets {
		write(bucket, r)
	}
	for _, r := range rep.ByModel {
		write("gpu_model", r)
	}
	for _, r := range rep.ByUser {
		write("user", r)
	}
	for _, r := range rep.ByGroup {
		write("group", r)
	}
	for _, r := range rep.TopIdle {
		write("top_idle_workbench", r)
	}
	for _, r := range rep.ByGPU {
		writeRow("gpu", r.Key, r.UtilFigures, r.Model)
	}
	// Units in unit-hours (the *_gpu_hours columns hold unit-hours here).
	for _, u := range rep.ByUnit {
		writeRow("unit", u.UnitUUID, u.UtilFigures, u.Model, u.Kind, u.Profile, u.Holder)
	}
	w.Flush()
	if err := w.Error(); err != nil {
		h.log.Warn("utilisation csv", "err", err)
	}
}
