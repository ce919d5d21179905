package handlers

import (
	"context"
	"fmt"
	"net/http"
	"net/url"

	"github.com/gin-gonic/gin"

	"workbench/models"
	"workbench/models/pricing"
	"workbench/orchestrator"
	"workbench/orchestrator/gpu"
	"workbench/templates"
)

func (h *Handler) gpuPage(c *gin.Context) {
	ctx := c.Request.Context()
	gpus, err := h.pool.List(ctx)
	if err != nil {
		h.fail(c, err)
		return
	}
	u := currentUser(c)
	holders, err := h.gpuHolders(ctx, u)
	if err != nil {
		h.fail(c, err)
		return
	}
	v := templates.GPUsView{Backend: h.pool.Backend(), Status: h.pool.Status(), Simulated: h.pool.Simulated(),
		CanDrain: u.IsAdmin(), Summary: h.gpuSummaries(ctx, gpus)}
	for _, g := range gpus {
		r := gpuRow(g)
		r.HeldBy = holders[g.WorkbenchID]
		r.Units = unitRows(g, holders)
		v.GPUs = append(v.GPUs, r)
	}
	if v.Queue, err = h.queueRows(ctx, u); err != nil {
		h.fail(c, err)
		return
	}
	if v.Reservations, err = h.reservationTimeline(c); err != nil {
		h.fail(c, err)
		return
	}
	h.render(c, http.StatusOK, templates.GPUsPage(h.page(c, "GPUs"), v))
}

// gpuStateLabels are the pool states as people read them.
var gpuStateLabels = map[string]string{
	orchestrator.GPUFree:      "Free",
	orchestrator.GPUInUse:     "In use",
	orchestrator.GPUDrained:   "Drained (not offered)",
	orchestrator.GPUUnhealthy: "Unhealthy",
	orchestrator.GPUMIG:       "MIG instances",
	orchestrator.GPUShared:    "Shared slices",
}

func gpuRow(g orchestrator.PoolGPU) templates.GPURow {
	r := templates.GPURow{Index: g.Index, UUID: g.UUID, Model: g.Model, MemoryMiB: g.MemoryMiB, State: g.State,
		Health: g.Health, Detail: g.HealthDetail, Drained: g.Drained, WorkbenchID: g.WorkbenchID,
		Name: fmt.Sprintf("GPU %d · %s", g.Index, models.ShortGPUName(g.Model)), StateLabel: gpuStateLabels[g.State]}
	if r.StateLabel == "" {
		r.StateLabel = g.State
	}
	if g.Util != nil {
		r.HasReading = true
		r.UtilPercent, r.MemUsedMiB, r.TempC, r.PowerW = g.Util.UtilPercent, g.Util.MemUsedMiB, g.Util.TempC, g.Util.PowerW
	}
	for _, s := range g.History {
		if !s.Readable(gpu.FieldUtil) {
			continue // unread is not 0%: leave it out of the line
		}
		r.UtilHistory = append(r.UtilHistory, float64(s.UtilPercent))
	}
	for _, m := range g.MIG {
		r.MIG = append(r.MIG, templates.MIGRow{Profile: m.Profile, UUID: m.UUID, MemoryMiB: m.MemoryMiB})
	}
	r.MIGEnabled, r.SharedSlices, r.SharedLabel = g.MIGEnabled, g.SharedSlices, sharedLabel
	r.MPSMemoryMiB, r.MPSThreadPct = g.MPSMemoryMiB, g.MPSThreadPercent
	if g.SharedSlices > 0 {
		r.StateLabel = fmt.Sprintf("Shared: %d of %d slices free", g.FreeUnits(), g.SharedSlices)
	} else if g.MIGEnabled {
		r.StateLabel = fmt.Sprintf("MIG: %d of %d instances free", g.FreeUnits(), len(g.Units))
	}
	return r
}

// unitRows lists a GPU's MIG instances or slices with who holds each (a
// user sees only their own workbenches named; others' units read "in use").
func unitRows(g orchestrator.PoolGPU, holders map[string]string) []templates.GPUUnitRow {
	var out []templates.GPUUnitRow
	for _, u := range g.Units {
		r := templates.GPUUnitRow{Kind: u.Kind, UUID: u.UUID, Free: u.WorkbenchID == "", Reading: unitReadingText(u.Reading)}
		if u.Kind == models.UnitMIG {
			r.Label = "MIG " + u.Profile
		} else {
			r.Label = fmt.Sprintf("slice %d", *u.Slice)
		}
		if !r.Free {
			r.HeldBy = holders[u.WorkbenchID]
			if r.HeldBy == "" {
				r.HeldBy = "in use"
			}
		}
		out = append(out, r)
	}
	return out
}

// gpuHolders names who holds busy GPUs, by workbench id: admins see every
// workbench and its owner, a user only their own workbenches.
func (h *Handler) gpuHolders(ctx context.Context, u *models.User) (map[string]string, error) {
	owner := u.ID
	if u.IsAdmin() {
		owner = 0
	}
	wbs, err := h.store.ListWorkbenches(ctx, owner, models.ActiveStates...)
	if err != nil {
		return nil, err
	}
	out := map[string]string{}
	if len(wbs) == 0 {
		return out, nil
	}
	users := map[int64]string{}
	if u.IsAdmin() {
		list, err := h.store.ListUsers(ctx)
		if err != nil {
			return nil, err
		}
		for _, x := range list {
			users[x.ID] = x.Username
		}
	}
	for _, wb := range wbs {
		if u.IsAdmin() {
			out[wb.ID] = wb.Name + " · " + users[wb.OwnerID]
		} else {
			out[wb.ID] = "your workbench " + wb.Name
		}
	}
	return out, nil
}

// gpuSummaries is one line per GPU model: how many are free, the price of
// one GPU-hour, and a launch link with the model's smallest flavor that
// fits now (else its smallest).
func (h *Handler) gpuSummaries(ctx context.Context, gpus []orchestrator.PoolGPU) []templates.GPUModelSummary {
	fls, err := h.store.ListFlavors(ctx, true) // by GPU count
	if err != nil {
		h.log.Warn("list flavors", "err", err)
	}
	var out []templates.GPUModelSummary
	index := map[string]int{}
	for _, g := range gpus {
		i, ok := index[g.Model]
		if !ok {
			i = len(out)
			index[g.Model] = i
			out = append(out, templates.GPUModelSummary{Model: g.Model, Short: models.ShortGPUName(g.Model)})
		}
		out[i].Total++
		if g.State == orchestrator.GPUFree {
			out[i].Free++
		}
	}
	for i := range out {
		s := &out[i]
		if rate, err := h.wbs.Billing().HourlyRate(ctx, pricing.Shape{GPUModel: s.Model, GPUCount: 1}); err == nil && rate > 0 {
			s.PerGPUh = pricing.Micros(rate).Format(h.cfg.Currency) + "/GPU-h"
		}
		var pick string
		for _, f := range fls {
			if f.GPUModel != s.Model {
				continue
			}
			if pick == "" {
				pick = f.Name
			}
			if f.GPUCount <= s.Free {
				pick = f.Name
				break
			}
		}
		if pick != "" {
			s.LaunchURL = "/workbenches/new?flavor=" + url.QueryEscape(pick)
		}
	}
	return out
}

// unitReadingText is a MIG instance's own reading for the page; a figure
// that could not be read says so rather than showing 0.
func unitReadingText(r *orchestrator.UnitReading) string {
	if r == nil {
		return ""
	}
	mem := "memory: could not read"
	if r.MemUsedMiB != nil && r.MemFreeMiB != nil {
		mem = fmt.Sprintf("%.1f of %.1f GiB used", float64(*r.MemUsedMiB)/1024, float64(*r.MemUsedMiB+*r.MemFreeMiB)/1024)
	}
	util := "utilisation not readable per instance"
	if r.UtilPercent != nil {
		util = fmt.Sprintf("%d%% busy", *r.UtilPercent)
	}
	return mem + " · " + util
}
