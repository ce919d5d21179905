package handlers

import (
	"context"
	"math"
	"net/http"
	"time"

	"github.com/gin-gonic/gin"

	"workbench/models"
	"workbench/models/pricing"
	"workbench/orchestrator"
)

// apiAdminUtilisation: GET /api/v1/admin/utilisation?bucket&from&to — the
// utilisation dashboard's figures as JSON (admin, as the page).
func (h *Handler) apiAdminUtilisation(c *gin.Context) {
	from, to, bucket, err := utilisationQuery(c, time.Now())
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
	var price *int64
	if p, set, err := h.store.ElectricityPrice(ctx); err == nil && set {
		price = &p
	}
	out := UtilisationJSON(rep, h.cfg.Currency, price)
	if out.RunningWorkbenches, err = h.runningSparklines(ctx); err != nil {
		h.fail(c, err)
		return
	}
	c.JSON(http.StatusOK, out)
}

// maxSparklineWorkbenches bounds the work of one dashboard request.
const maxSparklineWorkbenches = 500

// runningSparklines lists the running workbenches with their units' last
// hour (at most maxSparklineWorkbenches, newest first as listed).
func (h *Handler) runningSparklines(ctx context.Context) ([]APIWorkbenchSparklines, error) {
	wbs, err := h.store.ListWorkbenches(ctx, 0, models.StateRunning)
	if err != nil {
		return nil, err
	}
	out := []APIWorkbenchSparklines{}
	users := map[int64]string{}
	for i := range wbs {
		if len(out) == maxSparklineWorkbenches {
			break
		}
		wb := &wbs[i]
		if len(wb.GPUs) == 0 && len(wb.Units) == 0 {
			continue // CPU-only: no GPU to chart
		}
		tel, err := h.wbs.WorkbenchTelemetry(ctx, wb)
		if err != nil {
			return nil, err
		}
		name, ok := users[wb.OwnerID]
		if !ok {
			if u, err := h.store.UserByID(ctx, wb.OwnerID); err == nil {
				name = u.Username
			}
			users[wb.OwnerID] = name
		}
		s := APIWorkbenchSparklines{ID: wb.ID, Name: wb.Name, User: name, Units: []APIUnitTelemetry{}}
		for _, u := range tel.Units {
			s.Units = append(s.Units, apiUnitTelemetry(u))
		}
		out = append(out, s)
	}
	return out, nil
}

// UtilisationJSON is the API form of a utilisation report; price is the
// electricity price per kWh in micro-units (nil: none set).
func UtilisationJSON(rep orchestrator.UtilReport, currency string, price *int64) APIUtilisation {
	row := func(r orchestrator.UtilRow) APIUtilRow { return apiUtilRow(r, price) }
	rows := func(rs []orchestrator.UtilRow) []APIUtilRow {
		out := make([]APIUtilRow, 0, len(rs))
		for _, r := range rs {
			out = append(out, row(r))
		}
		return out
	}
	out := APIUtilisation{From: rep.From.UTC(), To: rep.To.UTC(), Bucket: rep.Bucket, Currency: currency,
		IdleThresholdPercent: rep.IdleThresholdPercent, ElectricityPricePerKWhMicros: price,
		Total: row(orchestrator.UtilRow{Key: "total", UtilFigures: rep.Total}), Buckets: rows(rep.Buckets),
		ByModel: rows(rep.ByModel), ByUser: rows(rep.ByUser), ByGroup: rows(rep.ByGroup), TopIdle: rows(rep.TopIdle),
		ByGPU: rows(rep.ByGPU), ByUnit: []APIUnitUtilRow{}}
	for i := range out.Buckets {
		out.Buckets[i].Start = ptr(rep.Buckets[i].Start.UTC())
	}
	for _, u := range rep.ByUnit {
		out.ByUnit = append(out.ByUnit, APIUnitUtilRow{Kind: u.Kind, UnitUUID: u.UnitUUID, GPUUUID: u.GPUUUID, Profile: u.Profile,
			Holder: u.Holder, APIUtilRow: row(orchestrator.UtilRow{Key: u.UnitUUID, Model: u.Model, UtilFigures: u.UtilFigures})})
	}
	return out
}

func apiUtilRow(r orchestrator.UtilRow, price *int64) APIUtilRow {
	a := APIUtilRow{Key: r.Key, Model: r.Model, AvailableHours: msHours(r.AvailableMs), AllocatedHours: msHours(r.AllocatedMs),
		BusyHours: msHours(r.BusyMs), HeldIdleHours: msHours(r.IdleHeldMs()), HeldUnreadHours: msHours(r.UnreadHeldMs),
		HeldBelowThresholdHours: msHours(r.HeldLowMs), UnheldCostMicros: r.UnheldCostMicros(),
		HeldIdleCostMicros: r.HeldIdleCostMicros(), HeldBelowThresholdCostMicros: r.HeldLowCostMicros()}
	if r.AllocatedMs-r.UnreadHeldMs > 0 {
		a.UsedPercent = ptr(r.UsedPercent())
	}
	if r.EnergyMinutes > 0 {
		a.EnergyMJ = ptr(r.EnergyMJ)
		if price != nil {
			a.EnergyCostMicros = ptr(pricing.EnergyCost(r.EnergyMJ, *price))
		}
	}
	return a
}

// msHours is milliseconds as hours, to the millihour (3.6 s).
func msHours(ms int64) float64 { return math.Round(float64(ms)/3_600) / 1000 }
