package handlers

import (
	"errors"
	"net/http"
	"net/url"
	"sort"
	"strconv"
	"strings"

	"github.com/gin-gonic/gin"

	"workbench/models"
	"workbench/orchestrator/simulate"
	"workbench/templates"
)

// simulateProfiles are the MIG profiles the page offers for "split the
// first N GPUs" (an H100/A100 80GB's plain profiles).
var simulateProfiles = []string{"1g.10gb", "2g.20gb", "3g.40gb", "4g.40gb", "7g.80gb"}

// adminSimulate: GET /admin/simulate[?run=1&policy=…&days=…&mig_gpus=N&
// mig_profile=P…] — the "what if" form; with run=1 it replays the ledger
// with the same code as GET /api/v1/admin/simulate (simulateLedger) and
// shows the policy table and the simulator's SVG chart. A GET form: it
// reads, never changes, the data. "Split the first N GPUs into P" is the
// API's mig=0:P … mig=N-1:P. A bad field is shown beside it, the form
// values kept.
func (h *Handler) adminSimulate(c *gin.Context) {
	q := c.Request.URL.Query()
	v := templates.AdminSimulateView{Profiles: simulateProfiles, Classes: simulate.ClassNames, Errors: templates.FormErrors{},
		Form: templates.SimulateForm{Days: q.Get("days"), Model: q.Get("model"), GPUs: q.Get("gpus"), SharedGPUs: q.Get("shared_gpus"),
			Slices: q.Get("slices"), Engine: q.Get("engine"), MIGGPUs: q.Get("mig_gpus"), MIGProfile: q.Get("mig_profile"), MIG: q.Get("mig")}}
	run := q.Get("run") != ""
	chosen := map[string]bool{}
	for _, p := range q["policy"] {
		chosen[p] = true
	}
	for _, p := range simulate.Policies {
		v.Policies = append(v.Policies, templates.SimulatePolicy{Name: string(p), Checked: !run || chosen[string(p)]})
	}
	if v.Form.Days == "" {
		v.Form.Days = "30"
	}
	if v.Form.MIGProfile == "" {
		v.Form.MIGProfile = "3g.40gb"
	}
	if !run {
		h.render(c, http.StatusOK, templates.AdminSimulatePage(h.page(c, trc(c, "What if")), v))
		return
	}
	api := url.Values{}
	for _, k := range []string{"days", "model", "gpus", "shared_gpus", "slices", "engine"} {
		if s := strings.TrimSpace(q.Get(k)); s != "" {
			api.Set(k, s)
		}
	}
	api["policy"] = q["policy"]
	if s := strings.TrimSpace(q.Get("mig")); s != "" {
		api.Add("mig", s)
	}
	if len(q["policy"]) == 0 {
		v.Errors["policy"] = trc(c, "choose at least one policy")
	}
	if s := strings.TrimSpace(v.Form.MIGGPUs); s != "" && s != "0" {
		n, err := strconv.Atoi(s)
		known := false
		for _, p := range simulateProfiles {
			known = known || p == v.Form.MIGProfile
		}
		switch {
		case err != nil || n < 0 || n > 8:
			v.Errors["mig_gpus"] = trc(c, "a whole number from 0 to 8")
		case !known:
			v.Errors["mig_gpus"] = trc(c, "choose a MIG profile from the list")
		default:
			for i := range n {
				api.Add("mig", strconv.Itoa(i)+":"+v.Form.MIGProfile)
			}
		}
	}
	if len(v.Errors) > 0 {
		h.render(c, http.StatusBadRequest, templates.AdminSimulatePage(h.page(c, trc(c, "What if")), v))
		return
	}
	out, results, err := h.simulateLedger(c.Request.Context(), api)
	var ve *models.ValidationError
	if errors.As(err, &ve) {
		field := ve.Field
		if field == "mig" && v.Form.MIG == "" {
			field = "mig_gpus" // the only MIG the form sent
		}
		v.Errors[field] = trcMsg(c, ve.Message)
		h.render(c, http.StatusBadRequest, templates.AdminSimulatePage(h.page(c, trc(c, "What if")), v))
		return
	} else if err != nil {
		h.fail(c, err)
		return
	}
	v.Ran = true
	v.Result = simulateResultView(out, results, h.cfg.Currency)
	h.render(c, http.StatusOK, templates.AdminSimulatePage(h.page(c, trc(c, "What if")), v))
}

// simulateResultView is the API's policy table as the page shows it, with
// the simulator's own SVG chart of the results.
func simulateResultView(out APISimulation, results []*simulate.Result, currency string) templates.SimulateResult {
	res := templates.SimulateResult{Model: out.Model, GPUs: out.GPUs, SharedGPUs: out.SharedGPUs, Slices: out.Slices,
		MIG: strings.Join(out.MIG, ", "), Days: out.Days, Engine: out.Engine, Jobs: out.Jobs, Currency: currency}
	users := map[string]bool{}
	for _, r := range out.Rows {
		for u := range r.CostMicros {
			users[u] = true
		}
	}
	for u := range users {
		res.Users = append(res.Users, u)
	}
	sort.Strings(res.Users)
	f1 := func(f float64) string { return strconv.FormatFloat(f, 'f', 1, 64) }
	for _, r := range out.Rows {
		row := templates.SimulateRow{Policy: r.Policy, Utilisation: f1(r.UtilisationPct), Served: f1(r.ServedPct), BusyHours: f1(r.BusyGPUHours),
			AvailableHours: f1(r.AvailableGPUHours), Rejected: r.Rejected, Preempted: r.Preempted, LostHours: f1(r.LostGPUHours), Unfinished: r.Unfinished}
		for _, cl := range simulate.ClassNames {
			w := r.Waits[cl]
			row.Waits = append(row.Waits, strconv.FormatInt(w.P50Seconds/60, 10)+" / "+strconv.FormatInt(w.P95Seconds/60, 10))
		}
		for _, u := range res.Users {
			row.Costs = append(row.Costs, r.CostMicros[u])
		}
		res.Rows = append(res.Rows, row)
	}
	var svg strings.Builder
	if err := simulate.WriteSVG(&svg, results); err == nil {
		res.SVG = svg.String()
	}
	return res
}
