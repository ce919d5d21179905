package handlers

import (
	"net/http"
	"strconv"
	"strings"

	"github.com/gin-gonic/gin"

	"workbench/models"
	"workbench/orchestrator/simulate"
)

// apiAdminSimulate: GET /api/v1/admin/simulate?days=30&policy=X
// [&mig=GPU:PROFILE…][&gpus=N][&shared_gpus=N][&slices=N][&engine=portal|scheduler]
// replays the real GPU usage of the last days (the runs the ledger
// priced) under other policies — "what if we split two H100s into MIG
// 3g.40gb?" — and answers the policy table of `workbench simulate
// --from-ledger` as JSON (issue 12 §5). policy may be given several times
// (or not at all: every policy). The pool's GPUs of the replayed model are
// the default server. Admin, sudo; it reads, never changes, the data (the
// portal engine replays in a temporary database of its own).
func (h *Handler) apiAdminSimulate(c *gin.Context) {
	ctx := c.Request.Context()
	bad := func(field, msg string) { h.fail(c, &models.ValidationError{Field: field, Message: msg}) }
	num := func(name string, def, lo, hi int) (int, bool) {
		text := c.Query(name)
		if text == "" {
			return def, true
		}
		n, err := strconv.Atoi(text)
		if err != nil || n < lo || n > hi {
			bad(name, "a whole number from "+strconv.Itoa(lo)+" to "+strconv.Itoa(hi))
			return 0, false
		}
		return n, true
	}
	cfg := simulate.DefaultConfig()
	days, ok := num("days", 30, 1, 366)
	if !ok {
		return
	}
	engine := c.DefaultQuery("engine", "portal")
	if engine != "portal" && engine != "scheduler" {
		bad("engine", "portal or scheduler")
		return
	}
	pols := simulate.Policies
	if names := c.QueryArray("policy"); len(names) > 0 {
		pols = nil
		for _, n := range names {
			p, err := simulate.ParsePolicy(strings.TrimSpace(n))
			if err != nil {
				bad("policy", err.Error())
				return
			}
			pols = append(pols, p)
		}
	}
	mig, err := simulate.ParseMIG(c.QueryArray("mig"))
	if err != nil {
		bad("mig", err.Error())
		return
	}
	if len(mig) > 0 && engine != "portal" {
		bad("mig", "MIG is simulated by the portal engine only")
		return
	}
	cfg.MIG = mig
	now := h.wbs.Now()
	tr, model, err := simulate.LedgerTrace(ctx, h.store, now.AddDate(0, 0, -days), now, c.Query("model"), cfg.SlicesPerGPU)
	if err != nil {
		bad("days", err.Error())
		return
	}
	inPool := 0
	if gpus, err := h.pool.List(ctx); err == nil {
		for _, g := range gpus {
			if g.Model == model {
				inPool++
			}
		}
	}
	if cfg.GPUs, ok = num("gpus", max(inPool, 1), 1, 1024); !ok {
		return
	}
	if engine == "portal" && cfg.GPUs > 8 {
		bad("gpus", "the portal engine simulates up to 8 GPUs; ask engine=scheduler")
		return
	}
	if cfg.SharedGPUs, ok = num("shared_gpus", min(cfg.SharedGPUs, cfg.GPUs-1), 0, cfg.GPUs-1); !ok {
		return
	}
	if cfg.SlicesPerGPU, ok = num("slices", cfg.SlicesPerGPU, 1, models.MaxSharedSlices); !ok {
		return
	}
	cfg.Model = strings.TrimPrefix(model, "NVIDIA ")
	out := APISimulation{Model: model, GPUs: cfg.GPUs, SharedGPUs: cfg.SharedGPUs, Slices: cfg.SlicesPerGPU, Days: days,
		Engine: engine, Jobs: len(tr), MIG: nonNil(c.QueryArray("mig")), Rows: []APISimulationRow{}}
	for _, p := range pols {
		var r *simulate.Result
		if engine == "portal" {
			r, err = simulate.RunPortal(ctx, tr, p, cfg)
		} else {
			r, err = simulate.Run(tr, p, cfg)
		}
		if err != nil {
			bad("policy", string(p)+": "+err.Error())
			return
		}
		out.WindowSeconds = int64(r.Window.Seconds())
		out.Rows = append(out.Rows, apiSimulationRow(r))
	}
	c.JSON(http.StatusOK, out)
}

func apiSimulationRow(r *simulate.Result) APISimulationRow {
	row := APISimulationRow{Policy: string(r.Policy), UtilisationPct: pct(r.Utilisation()), ServedPct: pct(r.ServedGPUHours / max(r.AvailableGPUHours, 1e-9)),
		BusyGPUHours: round1(r.BusyGPUHours), AvailableGPUHours: round1(r.AvailableGPUHours),
		Rejected: r.Rejected, Preempted: r.Preempted, LostGPUHours: round1(r.LostGPUHours), Unfinished: r.Unfinished,
		Waits: map[string]APISimulationWait{}, CostMicros: map[string]int64{}}
	for _, cl := range simulate.ClassNames {
		row.Waits[cl] = APISimulationWait{Jobs: len(r.Waits[cl]), P50Seconds: int64(simulate.Percentile(r.Waits[cl], 50).Seconds()),
			P95Seconds: int64(simulate.Percentile(r.Waits[cl], 95).Seconds())}
	}
	for u, c := range r.CostMicro {
		row.CostMicros[u] = c
	}
	return row
}

func pct(f float64) float64    { return round1(100 * f) }
func round1(f float64) float64 { return float64(int64(f*10+0.5)) / 10 }
