package web_test

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"reflect"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/docker/docker/api/types/container"
	"github.com/docker/docker/api/types/filters"
	"github.com/docker/docker/client"

	"workbench/models"
	"workbench/models/pricing"
	"workbench/orchestrator"
	"workbench/orchestrator/runtime"
	"workbench/web"
)

// Money on the real engine (SPEC §6): quotas checked inside the launch
// transaction, budgets enforced on running workbenches, rates changing
// while one runs, and the live cost a user sees against the ledger.

const moneyFlavor = "1x H100 80GB HBM3"

// moneyCall is one HTTP answer, for requests sent from goroutines (which
// must not call t.Fatal).
type moneyCall struct {
	code int
	body map[string]any
	err  error
}

func moneyDo(c *http.Client, base, method, path, token, body string) moneyCall {
	req, _ := http.NewRequest(method, base+path, strings.NewReader(body))
	req.Header.Set("Authorization", "Bearer "+token)
	if body != "" {
		req.Header.Set("Content-Type", "application/json")
	}
	res, err := c.Do(req)
	if err != nil {
		return moneyCall{err: err}
	}
	defer res.Body.Close()
	b, _ := io.ReadAll(res.Body)
	r := moneyCall{code: res.StatusCode}
	if err := json.Unmarshal(b, &r.body); err != nil {
		r.err = fmt.Errorf("not JSON (%d): %s", res.StatusCode, b)
	}
	return r
}

func errMessage(body map[string]any) string {
	e, _ := body["error"].(map[string]any)
	m, _ := e["message"].(string)
	return m
}

func num(v any) int64 {
	f, _ := v.(float64)
	return int64(f)
}

// moneyLaunch launches the one-GPU fake workbench and wants 202.
func moneyLaunch(t *testing.T, p *testPortal, token, name string) string {
	t.Helper()
	code, wb := p.api("POST", "/api/v1/workbenches", token, fmt.Sprintf(`{"name":%q,"image":"fake","flavor":%q}`, name, moneyFlavor))
	if code != http.StatusAccepted {
		t.Fatalf("launch %s: %d %v", name, code, wb)
	}
	return wb["id"].(string)
}

// moneyGPUModel is the GPU model of the test flavor (what prices key on).
func moneyGPUModel(t *testing.T, p *testPortal) string {
	t.Helper()
	fl, err := p.srv.Store.FlavorByNameOrID(context.Background(), moneyFlavor)
	if err != nil {
		t.Fatal(err)
	}
	return fl.GPUModel
}

// installContainers lists every container of the portal's install.
func installContainers(t *testing.T, p *testPortal, cli *client.Client) []container.Summary {
	t.Helper()
	id, _ := p.srv.Store.InstallID(context.Background())
	cs, err := cli.ContainerList(context.Background(), container.ListOptions{All: true,
		Filters: filters.NewArgs(filters.Arg("label", runtime.LabelInstall+"="+id))})
	if err != nil {
		t.Fatal(err)
	}
	return cs
}

// TestQuotaRace: 50 launches at once by a user allowed 2 GPUs. The check
// and the GPU binding share one BEGIN IMMEDIATE transaction, so exactly two
// get through however the requests interleave; the engine is the witness.
func TestQuotaRace(t *testing.T) {
	p, cli := enginePortal(t)
	// Runs before the engine cleanup (cleanups run last-first): launch
	// pipelines still going when a failing test ends would otherwise leave
	// containers behind it.
	t.Cleanup(p.srv.Manager.Wait)
	admin := tokenFor(t, p, "admin", "admin")
	alice := tokenFor(t, p, "alice", "user")
	if code, body := p.api("PUT", "/api/v1/admin/quotas/users/alice", admin, `{"max_gpus":2}`); code != 200 {
		t.Fatalf("set quota: %d %v", code, body)
	}

	const n = 50
	client := &http.Client{Timeout: 60 * time.Second, Transport: &http.Transport{MaxIdleConnsPerHost: n}}
	defer client.CloseIdleConnections()
	start := make(chan struct{})
	results := make([]moneyCall, n)
	var wg sync.WaitGroup
	for i := range n {
		wg.Go(func() {
			<-start
			results[i] = moneyDo(client, p.ts.URL, "POST", "/api/v1/workbenches", alice,
				fmt.Sprintf(`{"name":"race-%02d","image":"fake","flavor":%q}`, i, moneyFlavor))
		})
	}
	close(start)
	wg.Wait()

	var accepted []string
	refused := 0
	for i, r := range results {
		switch {
		case r.err != nil:
			t.Errorf("launch %d: %v", i, r.err)
		case r.code == http.StatusAccepted:
			accepted = append(accepted, r.body["id"].(string))
		case r.code == http.StatusUnprocessableEntity && errCode(r.body) == "quota_exceeded":
			refused++
			// The message names the limit, so the user knows what to ask for.
			if msg := errMessage(r.body); !strings.Contains(msg, "at most 2 GPUs") {
				t.Errorf("launch %d refused with %q; want the limit (at most 2 GPUs) named", i, msg)
			}
		default:
			t.Errorf("launch %d: %d %v; want 202 or 422 quota_exceeded", i, r.code, r.body)
		}
	}
	if len(accepted) != 2 || refused != n-2 {
		t.Fatalf("%d launches accepted and %d refused by the quota; want exactly 2 and %d", len(accepted), refused, n-2)
	}
	for _, id := range accepted {
		waitState(t, p, alice, id, "running")
	}
	p.srv.Manager.Wait()

	cs := installContainers(t, p, cli)
	if len(cs) != 2 {
		t.Fatalf("the engine has %d containers of this portal, want 2", len(cs))
	}
	allocs, _ := p.srv.Store.GPUAllocations(context.Background())
	if len(allocs) != 2 {
		t.Fatalf("%d GPUs bound, want 2", len(allocs))
	}
	code, list := p.api("GET", "/api/v1/workbenches", alice, "")
	if items, _ := list["items"].([]any); code != 200 || len(items) != 2 {
		t.Fatalf("alice has %d workbenches after the race (%d), want 2: refused launches leave nothing", len(items), code)
	}
	code, me := p.api("GET", "/api/v1/me", alice, "")
	usage, _ := me["usage"].(map[string]any)
	if code != 200 || num(usage["gpus_in_use"]) != 2 {
		t.Fatalf("/me usage after the race: %d %v", code, usage)
	}
}

// TestBudgetExhaustion: a launch whose minimum charge the budget cannot
// cover is refused; a running workbench is stopped once the monthly budget
// is spent, with the reason shown; launches and starts are refused; an
// admin raising the budget lets the user launch again. The minimum charge
// is 2 s here so that a budget of about 2 GPU-seconds covers it.
func TestBudgetExhaustion(t *testing.T) {
	p, _ := enginePortal(t, func(c *web.Config) {
		c.Workbenches.MinCharge = 2 * time.Second
		c.Workbenches.BillEvery = 300 * time.Millisecond
		c.Workbenches.HeartbeatEvery = 300 * time.Millisecond
	})
	cullRunManager(t, p)
	admin := tokenFor(t, p, "admin", "admin")
	alice := tokenFor(t, p, "alice", "user")
	// One currency unit per GPU-second, from now on; a budget of two units.
	rates := fmt.Sprintf(`{"rates":[{"resource":"gpu","gpu_model":%q,"rate_micros":3600000000}]}`, moneyGPUModel(t, p))
	if code, body := p.api("PUT", "/api/v1/admin/prices", admin, rates); code != 200 {
		t.Fatalf("set price: %d %v", code, body)
	}
	// 1.00 left cannot pay the 2 s minimum charge of 2.00: refused, nothing created.
	if code, body := p.api("PUT", "/api/v1/admin/quotas/users/alice", admin, `{"budget_per_month_micros":1000000}`); code != 200 {
		t.Fatalf("set quota: %d %v", code, body)
	}
	code, body := p.api("POST", "/api/v1/workbenches", alice, fmt.Sprintf(`{"name":"short","image":"fake","flavor":%q}`, moneyFlavor))
	if code != http.StatusUnprocessableEntity || errCode(body) != "quota_exceeded" || !strings.Contains(errMessage(body), "cannot cover this flavor's minimum charge") || !strings.Contains(errMessage(body), "at least 2 s") || !strings.Contains(errMessage(body), "the 1.00 USD left") {
		t.Fatalf("launch whose minimum charge the budget cannot cover: %d %v; want 422 quota_exceeded naming the minimum charge", code, body)
	}
	// A budget of exactly the minimum charge (2 GPU-seconds and a little
	// CPU and memory) covers it, and the run spends it to the micro-unit:
	// the budget stops it inside its minimum, not after a third second
	// began (a budget of 2.10 was charged 3.00).
	fl, err := p.srv.Store.FlavorByNameOrID(context.Background(), moneyFlavor)
	if err != nil {
		t.Fatal(err)
	}
	// Priced at the new rates (a second on: the rate set just now took
	// effect inside the current second).
	scheds, err := p.srv.Store.Schedules(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	from := time.Now().Truncate(time.Second).Add(2 * time.Second)
	lines, err := pricing.PriceShape(orchestrator.FlavorShape(fl), from, from.Add(2*time.Second), scheds)
	budget := pricing.SumResources(lines)
	if err != nil || budget < 2_000_000 || budget > 2_100_000 {
		t.Fatalf("the flavor's minimum charge %d (%v)", budget, err)
	}
	if code, body := p.api("PUT", "/api/v1/admin/quotas/users/alice", admin, fmt.Sprintf(`{"budget_per_month_micros":%d}`, budget)); code != 200 {
		t.Fatalf("set quota: %d %v", code, body)
	}

	id := moneyLaunch(t, p, alice, "spender")
	// Charging starts when the container starts, and the budget stops it at
	// the instant it runs out: on a slow machine that can be before Jupyter
	// answers, so "running" may pass unseen.
	for deadline := time.Now().Add(90 * time.Second); ; time.Sleep(50 * time.Millisecond) {
		_, wb := p.api("GET", "/api/v1/workbenches/"+id, alice, "")
		if wb["state"] == "running" || wb["state"] == "stopped" {
			break
		}
		if wb["state"] == "failed" || time.Now().After(deadline) {
			t.Fatalf("workbench %v (%v)", wb["state"], wb["reason"])
		}
	}
	running := time.Now()
	var wb map[string]any
	for {
		_, wb = p.api("GET", "/api/v1/workbenches/"+id, alice, "")
		if wb["state"] == "stopped" {
			break
		}
		if time.Since(running) > 30*time.Second {
			t.Fatalf("workbench still %v 30s after its 2 s budget ran out (cost so far %v)", wb["state"], wb["cost_so_far_micros"])
		}
		time.Sleep(100 * time.Millisecond)
	}
	t.Logf("stopped %s after running: %q", time.Since(running).Round(time.Millisecond), wb["reason"])
	if r, _ := wb["reason"].(string); !strings.Contains(r, "budget") {
		t.Fatalf("stopped with reason %q; want the budget named", r)
	}
	if g, _ := wb["gpus"].([]any); len(g) != 0 {
		t.Fatalf("stopped for budget but still holds GPUs %v", g)
	}
	code, me := p.api("GET", "/api/v1/me", alice, "")
	usage, _ := me["usage"].(map[string]any)
	// The run that spent the budget is in the ledger: at least the 2 s
	// minimum charge of GPU time, and the budget.
	if lr, _ := usage["limit_reached"].(string); code != 200 || !strings.Contains(lr, "budget") ||
		num(usage["month_gpu_seconds"]) != 2 || int64(num(usage["month_spend_micros"])) != budget {
		for _, l := range workbenchLines(t, p, "alice", id) {
			t.Logf("ledger line %s %s–%s %d s at %d = %d", l.Resource, l.PeriodStart, l.PeriodEnd, l.Seconds, l.RateMicros, l.AmountMicros)
		}
		t.Fatalf("/me after exhaustion: %d limit_reached %q (usage %v)", code, lr, usage)
	}
	// Used up is not also "80% or more": the warnings stop at the limit,
	// in the API and on /usage.
	if w, _ := usage["warnings"].([]any); len(w) != 0 {
		t.Errorf("/me at the limit still warns %v", w)
	}
	ac := p.client()
	p.login(ac, "alice", "alice-password")
	if _, page := p.get(ac, "/usage"); !strings.Contains(page, `data-testid="quota-limit-reached"`) || strings.Contains(page, `data-testid="quota-warning"`) {
		t.Error("/usage at the limit: want the limit-reached alert and no 80% warning")
	}

	code, body = p.api("POST", "/api/v1/workbenches", alice, fmt.Sprintf(`{"name":"more","image":"fake","flavor":%q}`, moneyFlavor))
	if code != http.StatusUnprocessableEntity || errCode(body) != "quota_exceeded" || !strings.Contains(errMessage(body), "budget") {
		t.Fatalf("launch over budget: %d %v; want 422 quota_exceeded naming the budget", code, body)
	}
	if code, body := p.api("POST", "/api/v1/workbenches/"+id+"/start", alice, ""); code != http.StatusUnprocessableEntity || errCode(body) != "quota_exceeded" {
		t.Fatalf("start over budget: %d %v; want 422 quota_exceeded", code, body)
	}
	// Lowering cost is always allowed, even over budget.
	if code, body := p.api("POST", "/api/v1/workbenches/"+id+"/stop", alice, ""); code != 200 {
		t.Fatalf("stop over budget: %d %v", code, body)
	}

	if code, body := p.api("PUT", "/api/v1/admin/quotas/users/alice", admin, `{"budget_per_month_micros":1000000000000}`); code != 200 {
		t.Fatalf("raise quota: %d %v", code, body)
	}
	id2 := moneyLaunch(t, p, alice, "again")
	waitState(t, p, alice, id2, "running")
	waitBillRounds(t, p, 4) // four enforcement passes with the raised budget
	if _, wb := p.api("GET", "/api/v1/workbenches/"+id2, alice, ""); wb["state"] != "running" {
		t.Fatalf("after the budget was raised the workbench is %v: %v", wb["state"], wb["reason"])
	}
	p.api("POST", "/api/v1/workbenches/"+id2+"/stop", alice, "")
}

// moneyPrices is the admin price list in force now, by schedule key.
func moneyPrices(t *testing.T, p *testPortal, admin string) map[string]int64 {
	t.Helper()
	code, body := p.api("GET", "/api/v1/admin/prices", admin, "")
	if code != 200 {
		t.Fatalf("prices: %d %v", code, body)
	}
	out := map[string]int64{}
	for _, it := range body["current"].([]any) {
		r := it.(map[string]any)
		out[models.PriceKey(r["resource"].(string), r["gpu_model"].(string))] = num(r["rate_micros"])
	}
	return out
}

// flavorHourly prices one hour of the test flavor at the given rates.
func flavorHourly(t *testing.T, p *testPortal, prices map[string]int64) int64 {
	t.Helper()
	fl, err := p.srv.Store.FlavorByNameOrID(context.Background(), moneyFlavor)
	if err != nil {
		t.Fatal(err)
	}
	return pricing.Amount(prices[models.PriceKey("gpu", fl.GPUModel)], int64(fl.GPUCount)*1000, 3600, false) +
		pricing.Amount(prices[models.PriceKey("cpu", "")], int64(fl.CPUMilli), 3600, false) +
		pricing.Amount(prices[models.PriceKey("memory", "")], fl.MemoryMiB*1000/1024, 3600, false)
}

// workbenchLines returns the ledger lines of one workbench.
func workbenchLines(t *testing.T, p *testPortal, user, wbID string) []models.LedgerEntry {
	t.Helper()
	ctx := context.Background()
	u, err := p.srv.Store.UserByUsername(ctx, user)
	if err != nil {
		t.Fatal(err)
	}
	all, err := p.srv.Store.Statement(ctx, u.ID, time.Now().AddDate(0, 0, -1), time.Now().AddDate(0, 0, 1))
	if err != nil {
		t.Fatal(err)
	}
	var out []models.LedgerEntry
	for _, l := range all {
		if l.WorkbenchID == wbID {
			out = append(out, l)
		}
	}
	return out
}

// billedSeconds is what the closed interval of a workbench is billed for.
func billedSeconds(t *testing.T, p *testPortal, wbID string, minCharge time.Duration) int64 {
	t.Helper()
	ivs, err := p.srv.Store.IntervalsOf(context.Background(), wbID)
	if err != nil || len(ivs) != 1 || ivs[0].EndedAt == nil {
		t.Fatalf("intervals of %s: %+v (%v); want one, closed", wbID, ivs, err)
	}
	s, e := pricing.BilledSpan(ivs[0].StartedAt, *ivs[0].EndedAt, minCharge)
	return int64(e.Sub(s) / time.Second)
}

// TestLiveCost: a running workbench's rate is the flavor's price; its cost
// so far owes the minimum charge from its first second (it read 0.01 in the
// first minute of a run billed 0.058 at its stop), so a run stopped within
// the minimum costs what its page showed; and once stopped its cost is
// exactly its ledger lines. (Growth past the minimum at the shown rate:
// orchestrator.TestBillingOpenIntervalLedgerPlusUnbilled, with a clock.)
func TestLiveCost(t *testing.T) {
	p, _ := enginePortal(t)
	admin := tokenFor(t, p, "admin", "admin")
	alice := tokenFor(t, p, "alice", "user")
	wantRate := flavorHourly(t, p, moneyPrices(t, p, admin))

	id := moneyLaunch(t, p, alice, "meter")
	wb := waitState(t, p, alice, id, "running")
	if got := num(wb["rate_per_hour_micros"]); got != wantRate {
		t.Fatalf("rate_per_hour_micros %d; the price list says %d for %s", got, wantRate, moneyFlavor)
	}
	c0 := num(wb["cost_so_far_micros"])
	// A minute at the rate, give or take a few micro-units of rounding
	// across resources.
	if lo, hi := wantRate*60/3600-5, wantRate*60/3600+5; c0 < lo || c0 > hi {
		t.Fatalf("cost so far %d at the start; the 60 s minimum charge at %d an hour is %d", c0, wantRate, wantRate*60/3600)
	}
	_, wb = p.api("GET", "/api/v1/workbenches/"+id, alice, "")
	c1 := num(wb["cost_so_far_micros"])

	if code, body := p.api("POST", "/api/v1/workbenches/"+id+"/stop", alice, ""); code != 200 {
		t.Fatalf("stop: %d %v", code, body)
	}
	wb = waitState(t, p, alice, id, "stopped")
	final := num(wb["cost_so_far_micros"])
	if num(wb["rate_per_hour_micros"]) != 0 {
		t.Errorf("a stopped workbench shows a rate of %v", wb["rate_per_hour_micros"])
	}
	if final < c1 {
		t.Fatalf("final cost %d below the running cost %d", final, c1)
	}
	// The default minimum charge is 60 s; a run that stopped within it
	// costs what it showed while running.
	secs := billedSeconds(t, p, id, 60*time.Second)
	if secs < 60 {
		t.Fatalf("billed %d s, below the 60 s minimum charge", secs)
	}
	if secs == 60 && final != c0 {
		t.Fatalf("a run shorter than the minimum was billed %d; it showed %d while running", final, c0)
	}
	code, usage := p.api("GET", "/api/v1/usage?group_by=workbench", alice, "")
	if code != 200 {
		t.Fatalf("usage: %d %v", code, usage)
	}
	var item map[string]any
	for _, it := range usage["items"].([]any) {
		if m := it.(map[string]any); m["key"] == "meter" {
			item = m
		}
	}
	if item == nil || num(item["amount_micros"]) != final || num(item["gpu_seconds"]) != secs {
		t.Fatalf("usage for the workbench %v; want amount %d (its cost) and %d GPU-seconds", item, final, secs)
	}
	var sum int64
	perResource := map[string]int64{}
	for _, l := range workbenchLines(t, p, "alice", id) {
		sum += l.AmountMicros
		perResource[l.Resource] += l.Seconds
	}
	if sum != final || perResource["gpu"] != secs || perResource["cpu"] != secs || perResource["memory"] != secs {
		t.Fatalf("ledger lines sum to %d for %v s by resource; want %d for %d s each", sum, perResource, final, secs)
	}
	// Asking again changes nothing: the cost is final.
	time.Sleep(300 * time.Millisecond)
	if _, again := p.api("GET", "/api/v1/workbenches/"+id, alice, ""); num(again["cost_so_far_micros"]) != final {
		t.Fatalf("the cost of a stopped workbench moved: %d → %v", final, again["cost_so_far_micros"])
	}
}

// TestRateChangeMidRun on the engine: the GPU price changes a few seconds
// into a run; the run's GPU lines split at that second, each part at its
// own rate; the shown rate follows; and a later price change leaves the
// written statement as it is. (Hour-boundary splits are covered by
// orchestrator.TestBillingSplitsAtHoursAndRateChanges with a fake clock.)
func TestRateChangeMidRun(t *testing.T) {
	p, _ := enginePortal(t, func(c *web.Config) {
		c.Workbenches.MinCharge = -1 // none: the split is what is looked at
		c.Workbenches.BillEvery = 300 * time.Millisecond
	})
	cullRunManager(t, p)
	admin := tokenFor(t, p, "admin", "admin")
	alice := tokenFor(t, p, "alice", "user")
	model := moneyGPUModel(t, p)
	before := moneyPrices(t, p, admin)
	oldRate := before[models.PriceKey("gpu", model)]
	const newRate = 7_000_000

	id := moneyLaunch(t, p, alice, "across")
	wb := waitState(t, p, alice, id, "running")
	if got := num(wb["rate_per_hour_micros"]); got != flavorHourly(t, p, before) {
		t.Fatalf("rate before the change %d, want %d", got, flavorHourly(t, p, before))
	}
	change := time.Now().Add(3 * time.Second).UTC().Truncate(time.Second)
	rates := fmt.Sprintf(`{"rates":[{"resource":"gpu","gpu_model":%q,"rate_micros":%d,"effective_from":%q}]}`, model, newRate, change.Format(time.RFC3339))
	if code, body := p.api("PUT", "/api/v1/admin/prices", admin, rates); code != 200 {
		t.Fatalf("set price: %d %v", code, body)
	}
	time.Sleep(time.Until(change.Add(1500 * time.Millisecond)))
	after := moneyPrices(t, p, admin)
	if after[models.PriceKey("gpu", model)] != newRate {
		t.Fatalf("price list after the change: %v", after)
	}
	_, wb = p.api("GET", "/api/v1/workbenches/"+id, alice, "")
	if got, want := num(wb["rate_per_hour_micros"]), flavorHourly(t, p, after); got != want {
		t.Fatalf("rate after the change %d, want %d (the new GPU rate in force)", got, want)
	}
	p.api("POST", "/api/v1/workbenches/"+id+"/stop", alice, "")
	waitState(t, p, alice, id, "stopped")

	var gpuSecs int64
	var beforeChange, afterChange int
	for _, l := range workbenchLines(t, p, "alice", id) {
		if l.AmountMicros != pricing.Amount(l.RateMicros, l.QuantityMilli, l.Seconds, false) {
			t.Errorf("line %s %s: amount %d ≠ %d × %d × %d s", l.Resource, l.PeriodStart, l.AmountMicros, l.RateMicros, l.QuantityMilli, l.Seconds)
		}
		if l.Resource != "gpu" {
			continue
		}
		gpuSecs += l.Seconds
		switch {
		// Lines lie on the run's own second grid: the second that
		// straddles the change is the last of the part before it.
		case l.PeriodEnd.Add(-time.Second).Before(change):
			beforeChange++
			if l.RateMicros != oldRate {
				t.Errorf("GPU line %s–%s before the change at %d, want %d", l.PeriodStart, l.PeriodEnd, l.RateMicros, oldRate)
			}
		case !l.PeriodStart.Before(change):
			afterChange++
			if l.RateMicros != newRate {
				t.Errorf("GPU line %s–%s after the change at %d, want %d", l.PeriodStart, l.PeriodEnd, l.RateMicros, newRate)
			}
		default:
			t.Errorf("GPU line %s–%s straddles the rate change at %s", l.PeriodStart, l.PeriodEnd, change)
		}
	}
	if beforeChange == 0 || afterChange == 0 {
		t.Fatalf("%d GPU lines before and %d after the change; want both parts billed", beforeChange, afterChange)
	}
	if want := billedSeconds(t, p, id, 0); gpuSecs != want {
		t.Fatalf("GPU lines cover %d s, the run was %d s", gpuSecs, want)
	}

	// The statement is written; a later price change must not touch it.
	// (Only this workbench's lines are compared: home-volume storage is
	// billed beside them and may gain an hour meanwhile.)
	snap := func() any {
		code, usage := p.api("GET", "/api/v1/usage?group_by=workbench", alice, "")
		if code != 200 {
			t.Fatalf("usage: %d %v", code, usage)
		}
		var item any
		for _, it := range usage["items"].([]any) {
			if it.(map[string]any)["key"] == "across" {
				item = it
			}
		}
		return []any{item, workbenchLines(t, p, "alice", id)}
	}
	was := snap()
	if code, body := p.api("PUT", "/api/v1/admin/prices", admin, fmt.Sprintf(`{"rates":[{"resource":"gpu","gpu_model":%q,"rate_micros":1}]}`, model)); code != 200 {
		t.Fatalf("second price change: %d %v", code, body)
	}
	waitBillRounds(t, p, 3)
	if now := snap(); !reflect.DeepEqual(was, now) {
		t.Fatalf("the statement changed after a later rate change:\nbefore %v\nafter  %v", was, now)
	}
}

// waitBillRounds waits until the manager's loop has finished n more
// billing and enforcement passes (after a negative check's action: the
// passes are what must not change anything). Bounded by two minutes, for
// a loop that has stopped.
func waitBillRounds(t *testing.T, p *testPortal, n uint64) {
	t.Helper()
	want := p.srv.Manager.BillRounds() + n
	for deadline := time.Now().Add(2 * time.Minute); p.srv.Manager.BillRounds() < want; time.Sleep(20 * time.Millisecond) {
		if time.Now().After(deadline) {
			t.Fatalf("%d billing passes in two minutes, want %d: is the manager's loop running?", p.srv.Manager.BillRounds()+n-want, n)
		}
	}
}
