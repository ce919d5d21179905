package handlers

import (
	"context"
	"net/http"
	"net/url"
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
	out, _, err := h.simulateLedger(c.Request.Context(), c.Request.URL.Query())
	if err != nil {
		h.fail(c, err)
		return
	}
	c.JSON(http.StatusOK, out)
}

// simulateLedger replays the ledger's last days as q asks (the parameters
// of GET /api/v1/admin/simulate) and answers the policy table and the
// simulator's results (for its SVG chart). A bad parameter is a
// ValidationError on its name. The API and the admin page /admin/simulate.
func (h *Handler) simulateLedger(ctx context.Context, q url.Values) (APISimulation, []*simulate.Result, error) {
	bad := func(field, msg string) error { return &models.ValidationError{Field: field, Message: msg} }
	num := func(name string, def, lo, hi int) (int, error) {
		text := strings.TrimSpace(q.Get(name))
		if text == "" {
			return def, nil
		}
		n, err := strconv.Atoi(text)
		if err != nil || n < lo || n > hi {
			return 0, bad(name, "a whole number from "+strconv.Itoa(lo)+" to "+strconv.Itoa(hi))
		}
		return n, nil
	}
	var none APISimulation
	cfg := simulate.DefaultConfig()
	days, err := num("days", 30, 1, 366)
	if err != nil {
		return none, nil, err
	}
	engine := q.Get("engine")
	if engine == "" {
		engine = "portal"
	}
	if engine != "portal" && engine != "scheduler" {
		return none, nil, bad("engine", "portal or scheduler")
	}
	pols := simulate.Policies
	if names := q["policy"]; len(names) > 0 {
		pols = nil
		for _, n := range names {
			p, err := simulate.ParsePolicy(strings.TrimSpace(n))
			if err != nil {
				return none, nil, bad("policy", err.Error())
			}
			pols = append(pols, p)
		}
	}
	migSpecs := q["mig"]
	now := h.wbs.Now()
	tr, model, err := simulate.LedgerTrace(ctx, h.store, now.AddDate(0, 0, -days), now, q.Get("model"), cfg.SlicesPerGPU)
	if err != nil {
		return none, nil, bad("days", err.Error())
	}
	// What is not asked for is the server as it is: its GPUs of the
	// model, the ones it shares and in how many slices, its MIG layout.
	gpus, _ := h.pool.List(ctx)
	layout := layoutOf(gpus, model)
	if q.Get("shared_gpus") == "" {
		cfg.SharedGPUs = layout.shared
	}
	if q.Get("slices") == "" && layout.slices > 0 && layout.slices != cfg.SlicesPerGPU {
		cfg.SlicesPerGPU = layout.slices
		if tr, model, err = simulate.LedgerTrace(ctx, h.store, now.AddDate(0, 0, -days), now, model, cfg.SlicesPerGPU); err != nil {
			return none, nil, bad("days", err.Error())
		}
	}
	if len(migSpecs) == 0 && engine == "portal" && q.Get("gpus") == "" {
		migSpecs = layout.mig
	}
	mig, err := simulate.ParseMIG(migSpecs)
	if err != nil {
		return none, nil, bad("mig", err.Error())
	}
	if len(mig) > 0 && engine != "portal" {
		return none, nil, bad("mig", "MIG is simulated by the portal engine only")
	}
	cfg.MIG = mig
	if cfg.GPUs, err = num("gpus", max(layout.gpus, 1), 1, 1024); err != nil {
		return none, nil, err
	}
	if engine == "portal" && cfg.GPUs > 8 {
		return none, nil, bad("gpus", "the portal engine simulates up to 8 GPUs; ask engine=scheduler")
	}
	for _, part := range mig {
		if part.Index >= cfg.GPUs {
			return none, nil, bad("mig", "GPU "+strconv.Itoa(part.Index)+" is not among the "+strconv.Itoa(cfg.GPUs)+" simulated GPUs (indexes from 0)")
		}
	}
	if cfg.SharedGPUs, err = num("shared_gpus", max(min(cfg.SharedGPUs, cfg.GPUs-1-len(mig)), 0), 0, cfg.GPUs-1); err != nil {
		return none, nil, err
	}
	if cfg.SlicesPerGPU, err = num("slices", cfg.SlicesPerGPU, 1, models.MaxSharedSlices); err != nil {
		return none, nil, err
	}
	cfg.Model = strings.TrimPrefix(model, "NVIDIA ")
	out := APISimulation{Model: model, GPUs: cfg.GPUs, SharedGPUs: cfg.SharedGPUs, Slices: cfg.SlicesPerGPU, Days: days,
		Engine: engine, Jobs: len(tr), MIG: nonNil(migSpecs), Rows: []APISimulationRow{}}
	var results []*simulate.Result
	for _, p := range pols {
		var r *simulate.Result
		if engine == "portal" {
			r, err = simulate.RunPortal(ctx, tr, p, cfg)
		} else {
			r, err = simulate.Run(tr, p, cfg)
		}
		if err != nil {
			return none, nil, bad("policy", string(p)+": "+err.Error())
		}
		out.WindowSeconds = int64(r.Window.Seconds())
		out.Rows = append(out.Rows, apiSimulationRow(r))
		results = append(results, r)
	}
	return out, results, nil
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
