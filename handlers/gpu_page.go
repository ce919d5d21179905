package handlers

import (
	"context"
	"fmt"
	"net/http"
	"net/url"
	"slices"
	"strconv"
	"strings"

	"github.com/gin-gonic/gin"

	"workbench/models"
	"workbench/models/pricing"
	"workbench/orchestrator"
	"workbench/orchestrator/gpu"
	"workbench/templates"
	"workbench/templates/i18n"
)

func (h *Handler) gpuPage(c *gin.Context) {
	h.renderGPUPage(c, http.StatusOK, gpuPageForms{})
}

// gpuPageForms are the pool page's forms as posted and refused, shown again
// with the values kept; the zero value is fresh forms.
type gpuPageForms struct {
	booking   *templates.BookingForm
	shareUUID string // the GPU whose share form share is
	share     *templates.ShareForm
}

// renderGPUPage shows the pool page with forms as posted.
func (h *Handler) renderGPUPage(c *gin.Context, status int, forms gpuPageForms) {
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
	// The summary counts what this user may take: units others' active
	// bookings hold back now are counted apart (the table below says what
	// each GPU is doing; a booking holds no particular GPU).
	held, err := h.heldForOthers(ctx, u)
	if err != nil {
		h.fail(c, err)
		return
	}
	v := templates.GPUsView{Backend: h.pool.Backend(), Status: i18n.Reason(ctx, h.pool.Status()), Simulated: h.pool.Simulated(),
		CanDrain: u.IsAdmin(), Summary: h.gpuSummaries(ctx, gpus, held), PriceChanges: h.priceChangesAhead(c)}
	kube := h.pool.OnKubernetes()
	for _, g := range gpus {
		r := gpuRow(ctx, g)
		if kube {
			// Units are "<node>:gpu-<i>" there, listed node by node: each
			// node's GPUs go under a heading of its own.
			r.Node, _, _ = strings.Cut(g.UUID, ":")
			r.NodeStart = len(v.GPUs) == 0 || v.GPUs[len(v.GPUs)-1].Node != r.Node
		}
		r.HeldBy = holders[g.WorkbenchID]
		if g.Unknown != nil && g.WorkbenchID == "" {
			r.HeldBy = unknownHolderText(ctx, g.Unknown)
		}
		r.Units = unitRows(ctx, g, holders)
		if g.UUID == forms.shareUUID {
			r.Share = forms.share
		}
		v.GPUs = append(v.GPUs, r)
	}
	if v.Queue, err = h.queueRows(ctx, u); err != nil {
		h.fail(c, err)
		return
	}
	if v.Booking, err = h.reservationsView(c, gpus, forms.booking); err != nil {
		h.fail(c, err)
		return
	}
	h.render(c, status, templates.GPUsPage(h.page(c, trc(c, "GPUs")), v))
}

// gpuStateLabel is a pool state as people read it.
func gpuStateLabel(lc context.Context, state string) string {
	switch state {
	case orchestrator.GPUFree:
		return i18n.T(lc, "Free")
	case orchestrator.GPUInUse:
		return i18n.T(lc, "In use")
	case orchestrator.GPUDrained:
		return i18n.T(lc, "Drained (not offered)")
	case orchestrator.GPUUnhealthy:
		return i18n.T(lc, "Unhealthy")
	case orchestrator.GPUMIG:
		return i18n.T(lc, "MIG instances")
	case orchestrator.GPUShared:
		return i18n.T(lc, "Shared slices")
	}
	return ""
}

func gpuRow(lc context.Context, g orchestrator.PoolGPU) templates.GPURow {
	r := templates.GPURow{Index: g.Index, UUID: g.UUID, Model: g.Model, MemoryMiB: g.MemoryMiB, State: g.State,
		Health: g.Health, Detail: g.HealthDetail, Drained: g.Drained, WorkbenchID: g.WorkbenchID,
		Name: orchestrator.GPUName(g.Index, g.Model), StateLabel: gpuStateLabel(lc, g.State)}
	if g.Drained && g.State == orchestrator.GPUInUse {
		// Drained while held: the state says "In use", and nothing said
		// the GPU will not be offered again once its holder stops.
		r.StateLabel = i18n.T(lc, "In use · drained (not offered again when free)")
	}
	if r.StateLabel == "" {
		r.StateLabel = g.State
	}
	if u := g.Util; u != nil {
		if u.UtilPercent != nil {
			r.HasUtil, r.UtilPercent = true, *u.UtilPercent
		}
		if u.MemUsedMiB != nil {
			r.HasMem, r.MemUsedMiB = true, *u.MemUsedMiB
		}
		if u.TempC != nil {
			r.HasTemp, r.TempC = true, *u.TempC
		}
		if u.PowerW != nil {
			r.HasPower, r.PowerW = true, *u.PowerW
		}
	}
	if n := len(g.Outside); n > 0 {
		var mib uint64
		for _, o := range g.Outside {
			mib += o.UsedMemMiB
		}
		procs := i18n.T(lc, "%d processes", n)
		if n == 1 {
			procs = i18n.T(lc, "1 process")
		}
		r.Outside = procs + ", " + templates.GiB(mib)
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
	r.MIGEnabled, r.SharedSlices, r.SharedLabel = g.MIGEnabled, g.SharedSlices, i18n.T(lc, sharedLabel)
	r.MPSMemoryMiB, r.MPSThreadPct = g.MPSMemoryMiB, g.MPSThreadPercent
	// A drained or unhealthy GPU keeps that label: its instances or
	// slices are not offered, so "7 of 7 instances free" would be false.
	switch {
	case g.State == orchestrator.GPUDrained || g.State == orchestrator.GPUUnhealthy:
	case g.SharedSlices > 0:
		// "%d slices" says "1 slice" for a GPU shared in one before that
		// was refused.
		r.StateLabel = i18n.T(lc, "Shared: %d of %s free", g.FreeUnits(), i18n.T(lc, "%d slices", g.SharedSlices))
	case g.MIGEnabled:
		r.StateLabel = i18n.T(lc, "MIG: %d of %d instances free", g.FreeUnits(), len(g.Units))
	}
	return r
}

// unitRows lists a GPU's MIG instances or slices with who holds each (a
// user sees only their own workbenches named; others' units read "in use").
func unitRows(lc context.Context, g orchestrator.PoolGPU, holders map[string]string) []templates.GPUUnitRow {
	var out []templates.GPUUnitRow
	for _, u := range g.Units {
		r := templates.GPUUnitRow{Kind: u.Kind, UUID: u.UUID, Free: u.Free(), Reading: unitReadingTextT(lc, u.Reading)}
		if u.Kind == models.UnitMIG {
			r.Label = "MIG " + u.Profile
		} else {
			r.Label = i18n.T(lc, "slice %s", strconv.Itoa(*u.Slice))
		}
		if !r.Free {
			r.HeldBy = holders[u.WorkbenchID]
			if r.HeldBy == "" && u.Unknown != nil {
				r.HeldBy = unknownHolderText(lc, u.Unknown)
			}
			if r.HeldBy == "" {
				r.HeldBy = i18n.T(lc, "in use")
			}
		}
		out = append(out, r)
	}
	return out
}

// unknownHolderText says that a container the portal does not know holds a
// GPU or unit (a restored backup's orphan: a workbench launched after the
// backup), by its name and when the orphan sweep removes it, which frees
// it. Everyone sees it: the name says nothing about whose it is.
func unknownHolderText(lc context.Context, u *orchestrator.UnknownHolder) string {
	return i18n.T(lc, "in use by a container the portal does not know: %s (the portal removes it at %s)", u.Name, templates.ClockIn(lc, u.RemoveAt))
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
	for _, wb := range wbs {
		if u.IsAdmin() {
			out[wb.ID] = wb.Name + " · " + wb.OwnerName // joined in SQL: no user list read
		} else {
			out[wb.ID] = i18n.T(ctx, "your workbench %s", wb.Name)
		}
	}
	return out, nil
}

// gpuSummaries is one line per GPU model: how many are free, the price of
// one GPU-hour, and a launch link with the model's smallest flavor that
// fits now (else its smallest); then, for a model with MIG instances or
// shared slices in service, how many of each are free. Free is what the
// viewer may take: held are the units others' active bookings hold back
// from them now (heldForOthers), counted apart.
func (h *Handler) gpuSummaries(ctx context.Context, gpus []orchestrator.PoolGPU, held map[models.UnitPool]int) []templates.GPUModelSummary {
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
		switch gpuKind(g) {
		case models.UnitMIG:
			out[i].MIGGPUs++
		case models.UnitSlice:
			out[i].SharedGPUs++
		default:
			out[i].Total++
		}
		if g.State == orchestrator.GPUFree {
			out[i].Free++
		}
		if g.State != orchestrator.GPUMIG && g.State != orchestrator.GPUShared {
			continue // whole, drained or out of order: its units are not offered
		}
		for _, u := range g.Units {
			k := models.UnitPool{Kind: u.Kind, Model: g.Model}
			if u.Kind == models.UnitMIG {
				k.Profile = u.Profile
			}
			j := slices.IndexFunc(out[i].Units, func(s templates.UnitSummary) bool { return s.Kind == k.Kind && s.Profile == k.Profile })
			if j < 0 {
				j = len(out[i].Units)
				label := i18n.T(ctx, "Shared slices")
				if u.Kind == models.UnitMIG {
					label = i18n.T(ctx, "MIG %s", u.Profile)
				}
				out[i].Units = append(out[i].Units, templates.UnitSummary{Kind: k.Kind, Profile: k.Profile, Label: label})
			}
			out[i].Units[j].Total++
			if u.Free() {
				out[i].Units[j].Free++
			}
		}
	}
	for i := range out {
		s := &out[i]
		s.Free, s.Booked = lessBooked(s.Free, held[models.UnitPool{Kind: models.UnitGPU, Model: s.Model}])
		for j := range s.Units {
			u := &s.Units[j]
			u.Free, u.Booked = lessBooked(u.Free, held[models.UnitPool{Kind: u.Kind, Model: s.Model, Profile: u.Profile}])
		}
		if rate, err := h.wbs.Billing().HourlyRate(ctx, pricing.Shape{GPUModel: s.Model, GPUCount: 1}); err == nil && rate > 0 {
			s.PerGPUh = templates.MoneyRate(ctx, rate, h.cfg.Currency) + i18n.T(ctx, "/GPU-h")
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
func unitReadingText(r *orchestrator.UnitReading) string { return unitReadingTextT(nil, r) }

// unitReadingTextT is unitReadingText in lc's language.
func unitReadingTextT(lc context.Context, r *orchestrator.UnitReading) string {
	if r == nil {
		return ""
	}
	mem := i18n.T(lc, "memory: could not read")
	if r.MemUsedMiB != nil && r.MemFreeMiB != nil {
		mem = i18n.T(lc, "%s of %s GiB used", fmt.Sprintf("%.1f", float64(*r.MemUsedMiB)/1024), fmt.Sprintf("%.1f", float64(*r.MemUsedMiB+*r.MemFreeMiB)/1024))
	}
	util := i18n.T(lc, "utilisation not readable per instance")
	if r.UtilPercent != nil {
		util = i18n.T(lc, "%d%% busy", *r.UtilPercent)
	}
	return mem + " · " + util
}
