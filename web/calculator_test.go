package web_test

import (
	"context"
	"encoding/csv"
	"encoding/json"
	"fmt"
	"math"
	"net/http"
	"net/url"
	"regexp"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/PuerkitoBio/goquery"

	"workbench/models"
	"workbench/models/pricing"
	"workbench/orchestrator"
	"workbench/web"
)

// The simulated DGX H100's GPU model and its smallest flavor.
const (
	calcGPU    = "NVIDIA H100 80GB HBM3"
	calcFlavor = "1x H100 80GB HBM3"
)

// calcPortal is a portal with the cloud price catalog seeded, as the first
// start does (seeding is idempotent, so this also holds once bootstrap
// seeds it).
func calcPortal(t *testing.T) *testPortal {
	t.Helper()
	p := newPortal(t)
	if _, err := p.srv.Store.SeedCloudPrices(context.Background()); err != nil {
		t.Fatal(err)
	}
	if code, _ := p.api("POST", "/api/v1/calculator/tco", tokenFor(t, p, "probe", "user"), `{}`); code == http.StatusNotFound {
		t.Fatal("the calculator routes are not registered: Routes must call h.calculatorRoutes(ui, admin, api, apiAdmin)")
	}
	return p
}

func parseHTML(t *testing.T, body string) *goquery.Document {
	t.Helper()
	doc, err := goquery.NewDocumentFromReader(strings.NewReader(body))
	if err != nil {
		t.Fatal(err)
	}
	return doc
}

func tid(id string) string { return `[data-testid="` + id + `"]` }

var nanRe = regexp.MustCompile(`\b(NaN|[+-]?Inf(inity)?)\b`)

// noNaN fails when a page or export shows a NaN or an infinity.
func noNaN(t *testing.T, what, body string) {
	t.Helper()
	if m := nanRe.FindString(body); m != "" {
		t.Errorf("%s contains %q", what, m)
	}
}

// moneyText parses "612.48 USD" (or "3.48 USD/GPU-h") into micro-units.
func moneyText(t *testing.T, s string) int64 {
	t.Helper()
	f := strings.Fields(s)
	if len(f) == 0 {
		t.Fatalf("no amount in %q", s)
	}
	m, err := models.ParseMoneyMicros(f[0])
	if err != nil {
		t.Fatalf("amount %q: %v", s, err)
	}
	return m
}

func TestCalculatorPageShowsHereCloudAndTCO(t *testing.T) {
	p := calcPortal(t)
	c := p.client()
	tokenFor(t, p, "ada", "user")
	p.login(c, "ada", "ada-password")
	res, body := p.get(c, "/calculator")
	if res.StatusCode != http.StatusOK {
		t.Fatalf("GET /calculator: %d", res.StatusCode)
	}
	noNaN(t, "the calculator page", body)
	doc := parseHTML(t, body)

	// A new user sees the smallest flavor of the detected GPUs priced here.
	if sel := doc.Find(tid("flavor-select") + " option[selected]"); sel.AttrOr("value", "") != calcFlavor {
		t.Errorf("default flavor %q", sel.AttrOr("value", ""))
	}
	// 8 h × 22 days of 1 GPU, 8 cores, 64 GiB at the seeded rates (3.00 + 0.16 + 0.32 an hour).
	if got := moneyText(t, doc.Find(tid("estimate-per-hour")).Text()); got != 3_480_000 {
		t.Errorf("per hour %d", got)
	}
	if got := moneyText(t, doc.Find(tid("estimate-total")).Text()); got != 176*3_480_000 {
		t.Errorf("total %d", got)
	}
	if n := doc.Find(tid("estimate-line")).Length(); n != 3 {
		t.Errorf("breakdown lines %d, want GPU, CPU, memory", n)
	}

	// At a dozen cloud offers or more, cheapest first, each with date and source.
	rows := doc.Find(tid("cloud-row"))
	if rows.Length() < 12 {
		t.Fatalf("cloud rows: %d", rows.Length())
	}
	// Listed prices, then the estimated tiers folded away; each sorted by cost.
	for _, table := range []string{"cloud-table", "cloud-estimate-table"} {
		prev := int64(-1)
		doc.Find(tid(table) + " " + tid("cloud-cost")).Each(func(i int, c *goquery.Selection) {
			if cost := moneyText(t, c.Text()); cost < prev {
				t.Errorf("%s row %d costs %d after %d: not sorted", table, i, cost, prev)
			} else {
				prev = cost
			}
		})
	}
	listed, estimates := 0, 0
	rows.Each(func(i int, r *goquery.Selection) {
		if strings.TrimSpace(r.Find(tid("cloud-source")).Text()) == "" || strings.TrimSpace(r.Find(tid("cloud-as-of")).Text()) == "" {
			t.Errorf("row %d lacks a source or date: %q", i, r.Text())
		}
		if v := r.Find(tid("cloud-vs")).Text(); !strings.Contains(v, "% more here") && !strings.HasPrefix(v, "saves ") {
			t.Errorf("row %d comparison %q", i, v)
		}
		if r.Find(tid("estimate-badge")).Length() > 0 {
			estimates++
		} else {
			listed++
		}
	})
	if listed < 9 || estimates == 0 {
		t.Errorf("%d listed offers, %d estimates", listed, estimates)
	}
	if !strings.Contains(body, "AWS EC2 on-demand list price us-east-1") || !strings.Contains(body, "2026-09-10") {
		t.Error("the AWS row's source and date are not shown")
	}
	// CNY offers are converted by default (issue 14), under their plain
	// provider description, the rate beside them with its date and source.
	if doc.Find(tid("cloud-left-out")).Length() != 0 {
		t.Errorf("offers left out with the shipped rates: %q", doc.Find(tid("cloud-left-out")).Text())
	}
	if !strings.Contains(body, "China market (8-GPU server lease, unnamed lessors)") || !strings.Contains(body, "1 USD = 7.2 CNY (2026-09, default:") {
		t.Error("the CNY offers or their default exchange rate (with date and source) are not shown")
	}
	if strings.Contains(body, "seed 00") {
		t.Error("the calculator names an internal file")
	}

	// TCO of the detected 8 × H100 server with typical values.
	if got := doc.Find(tid("tco-gpu_model")).AttrOr("value", ""); got != calcGPU {
		t.Errorf("TCO model %q", got)
	}
	if got := doc.Find(tid("tco-gpus_per_server")).AttrOr("value", ""); got != "8" {
		t.Errorf("GPUs per server %q", got)
	}
	if moneyText(t, doc.Find(tid("owned-per-gpu-hour")).Text()) <= 0 {
		t.Error("no owned cost per GPU-hour")
	}
	if n := doc.Find(tid("tco-row")).Length(); n != 4 {
		t.Errorf("utilisation table rows %d", n)
	}
	if n := doc.Find(tid("break-even-row")).Length(); n < 9 {
		t.Errorf("break-even rows %d", n)
	}
	if n := doc.Find(tid("tco-chart") + " " + tid("chart-series")).Length(); n != 4 {
		t.Errorf("chart series %d, want owning + 3 offers", n)
	}
	if doc.Find(tid("apply-rate-form")).Length() != 0 {
		t.Error("a user is offered to apply a rate")
	}

	// The share link reproduces the page; the CSV carries the same numbers.
	share := doc.Find(tid("share-link")).AttrOr("href", "")
	if !strings.HasPrefix(share, "/calculator?") || !strings.Contains(share, "flavor=") || !strings.Contains(share, "utilization=") {
		t.Fatalf("share link %q", share)
	}
	res2, body2 := p.get(c, share)
	if res2.StatusCode != 200 || parseHTML(t, body2).Find(tid("estimate-total")).Text() != doc.Find(tid("estimate-total")).Text() {
		t.Fatalf("the share link does not give the same total (%d)", res2.StatusCode)
	}
	csvURL := doc.Find(tid("csv-link")).AttrOr("href", "")
	res3, csvBody := p.get(c, csvURL)
	if res3.StatusCode != 200 || !strings.HasPrefix(res3.Header.Get("Content-Type"), "text/csv") {
		t.Fatalf("CSV: %d %s", res3.StatusCode, res3.Header.Get("Content-Type"))
	}
	noNaN(t, "the CSV", csvBody)
	recs, err := csv.NewReader(strings.NewReader(strings.TrimPrefix(csvBody, "\ufeff"))).ReadAll()
	if err != nil {
		t.Fatalf("CSV: %v", err)
	}
	if strings.Join(recs[0], ",") != "section,item,metric,value,unit,as_of,source" {
		t.Fatalf("CSV header %v", recs[0])
	}
	find := func(section, item, metric string) []string {
		for _, r := range recs {
			if r[0] == section && (item == "" || r[1] == item) && r[2] == metric {
				return r
			}
		}
		t.Fatalf("CSV has no %s/%s/%s", section, item, metric)
		return nil
	}
	if got := find("estimate", "total", "total")[3]; got != pricing.FormatExact(176*3_480_000) {
		t.Errorf("CSV total %s", got)
	}
	// Rates and amounts are numbers a sheet can add, to the micro-unit
	// (0.012345 per core-hour was "0.0123 per core-hour", as text). The
	// seeded CPU rate: 0.16 an hour for 8 cores.
	const cpuRate = 20_000
	if r := find("estimate", "CPU", "rate"); r[3] != pricing.FormatExact(cpuRate) || r[4] != "USD per core-hour" {
		t.Errorf("CSV CPU rate %q %q, want %s, USD per core-hour", r[3], r[4], pricing.FormatExact(cpuRate))
	}
	var firstBE []string // the first listed offer (estimates are folded away on the page)
	for _, r := range recs {
		if r[0] == "break_even" && r[2] == "break_even_utilization" && !strings.Contains(r[1], "estimate") {
			firstBE = r
			break
		}
	}
	be, _ := strconv.ParseFloat(firstBE[3], 64)
	pageBE := strings.TrimSuffix(strings.Fields(doc.Find(tid("break-even-utilization")).First().Text())[0], "%")
	if pb, _ := strconv.ParseFloat(pageBE, 64); math.Abs(pb-be*100) > 0.051 {
		t.Errorf("break-even: page %s%%, CSV %v", pageBE, be)
	}
	// The date column is blank only where the source gave none (the
	// shipped catalog has undated rows); the source is always there.
	if len(firstBE) < 7 || firstBE[6] == "" {
		t.Errorf("CSV offer row lacks its source: %v", firstBE)
	}
}

func TestCalculatorBadInputNeverFails(t *testing.T) {
	p := calcPortal(t)
	c := p.client()
	p.login(c, "admin", adminPassword)
	tok := tokenFor(t, p, "bob", "user")

	res, body := p.get(c, "/calculator?flavor=custom&gpu_count=-1&cpu_cores=abc&days=0&utilization=0&pue=abc&server_price=-5&residual_value=1e20")
	if res.StatusCode != http.StatusBadRequest {
		t.Fatalf("bad input: %d", res.StatusCode)
	}
	noNaN(t, "the page with bad input", body)
	doc := parseHTML(t, body)
	for _, f := range []string{"gpu_count", "cpu_cores", "days", "utilization", "pue", "server_price", "residual_value"} {
		if doc.Find(tid("error-"+f)).Length() != 1 {
			t.Errorf("no message next to %s", f)
		}
	}
	if got := doc.Find(tid("tco-utilization")).AttrOr("value", ""); got != "0" {
		t.Errorf("the bad value is not shown as typed: %q", got)
	}
	for _, q := range []string{"/calculator?flavor=nope", "/calculator?gpu_model=Z9000", "/calculator?flavor=custom&shape_gpu_model=B300&gpu_count=1",
		"/calculator?utilization=0.5%25%25", "/calculator?horizon_years=1e999", "/calculator.csv?utilization=0"} {
		if res, _ := p.get(c, q); res.StatusCode != http.StatusBadRequest {
			t.Errorf("%s: %d, want 400", q, res.StatusCode)
		}
	}

	for _, cse := range []struct{ path, body, code string }{
		{"/api/v1/calculator/tco", `{"utilization":0}`, "invalid_utilization"},
		{"/api/v1/calculator/tco", `{"utilization":true}`, "invalid_utilization"},
		{"/api/v1/calculator/tco", `{"gpu_model":"Z9000"}`, "invalid_gpu_model"},
		{"/api/v1/calculator/tco", `{"pue":"NaN"}`, "invalid_pue"},
		{"/api/v1/calculator/tco", `{"gpu_idle_watts":900,"gpu_active_watts":700}`, "invalid_gpu_idle_watts"},
		{"/api/v1/calculator/tco", `[1,2]`, "invalid_body"},
		{"/api/v1/calculator/estimate", `{}`, "invalid_flavor"},
		{"/api/v1/calculator/estimate", `{"flavor":"nope","total_hours":1}`, "invalid_flavor"},
		{"/api/v1/calculator/estimate", `{"gpu_model":"B300","gpu_count":1,"total_hours":1}`, "invalid_gpu_model"},
		{"/api/v1/calculator/estimate", `{"cpu_cores":4,"total_hours":-1}`, "invalid_total_hours"},
		{"/api/v1/calculator/estimate", `{"cpu_cores":4,"hours_per_day":8,"days":1e400}`, "invalid_days"},
		{"/api/v1/calculator/estimate", `not json`, "invalid_body"},
	} {
		code, out := p.api("POST", cse.path, tok, cse.body)
		if code != http.StatusBadRequest || errCode(out) != cse.code {
			t.Errorf("%s %s: %d %v, want 400 %s", cse.path, cse.body, code, out, cse.code)
		}
	}
	code, out := p.api("POST", "/api/v1/calculator/tco", tok, `{"utilization":0,"pue":0.5}`)
	fields, _ := out["error"].(map[string]any)["fields"].(map[string]any)
	if code != 400 || fields["utilization"] == nil || fields["pue"] == nil {
		t.Errorf("field errors: %v", out)
	}
}

func TestCalculatorAPI(t *testing.T) {
	p := calcPortal(t)
	ctx := context.Background()
	tok := tokenFor(t, p, "carol", "user")

	// From a clock hour: the storage figures below are 528 whole hour lines.
	hour := time.Now().UTC().Truncate(time.Hour).Format(time.RFC3339)
	code, est := p.api("POST", "/api/v1/calculator/estimate", tok, `{"flavor":"`+calcFlavor+`","hours_per_day":8,"days":22,"storage_gib":100,"start":"`+hour+`"}`)
	if code != 200 {
		t.Fatalf("estimate: %d %v", code, est)
	}
	fl, err := p.srv.Store.FlavorByNameOrID(ctx, calcFlavor)
	if err != nil {
		t.Fatal(err)
	}
	hourly, err := p.srv.Manager.Billing().HourlyRate(ctx, orchestrator.FlavorShape(fl))
	if err != nil {
		t.Fatal(err)
	}
	if est["per_hour_micros"].(float64) != float64(hourly+13_699) || est["compute_total_micros"].(float64) != float64(176*hourly) {
		t.Errorf("estimate %v/h, compute %v; billing says %d/h", est["per_hour_micros"], est["compute_total_micros"], hourly)
	}
	// 100 GiB over 22 days at 0.10 per GiB-month: 528 hour lines that carry
	// their remainders, 10.00 × 528 / 730 = 7.23287671 (not 528 × 13 699).
	if est["storage_total_micros"].(float64) != 7_232_877 || est["total"] != pricing.Format(176*hourly+7_232_877) {
		t.Errorf("storage %v, total %v", est["storage_total_micros"], est["total"])
	}
	cloud := est["cloud"].([]any)
	if len(cloud) < 12 {
		t.Fatalf("cloud offers %d", len(cloud))
	}
	last := -1.0
	for _, o := range cloud {
		m := o.(map[string]any)
		if m["cost_micros"].(float64) < last || m["source"] == "" {
			t.Errorf("offer %v", m)
		}
		last = m["cost_micros"].(float64)
	}

	code, tco := p.api("POST", "/api/v1/calculator/tco", tok, `{"gpu_model":"`+calcGPU+`","gpus_per_server":8,"server_price":250000,"depreciation_years":4,
		"residual_value":"25000","gpu_active_watts":700,"gpu_idle_watts":80,"overhead_watts":2500,"pue":1.3,"electricity_per_kwh":0.12,
		"colo_per_kw_month":0,"rack_per_month":1500,"maintenance_rate":0.08,"staff_per_year":12000,"utilization":0.6}`)
	if code != 200 {
		t.Fatalf("tco: %d %v", code, tco)
	}
	// annual = 225000/4 + (8·(700·.6+80·.4)+2500)/1000·8760·1.3·0.12 + 1500·12 + 0.08·250000 + 12000
	kwh := (8*(700*0.6+80*0.4) + 2500) / 1000 * 8760 * 1.3
	annual := 225000.0/4 + kwh*0.12 + 18000 + 20000 + 12000
	if got := tco["annual_cost_micros"].(float64) / 1e6; math.Abs(got-annual) > 0.01 {
		t.Errorf("annual %v, want %v", got, annual)
	}
	owned := annual / (8 * 8760 * 0.6)
	if got := tco["owned_per_gpu_hour_micros"].(float64) / 1e6; math.Abs(got-owned) > 1e-6 || tco["owned_per_gpu_hour"] != pricing.FormatRate(int64(math.Round(owned*1e6))) {
		t.Errorf("owned per GPU-hour %v (%v), want %v", got, tco["owned_per_gpu_hour"], owned)
	}
	offers := tco["offers"].([]any)
	if len(offers) < 9 {
		t.Fatalf("offers %d", len(offers))
	}
	for _, o := range offers {
		m := o.(map[string]any)
		rate := m["rate_per_gpu_hour_micros"].(float64) / 1e6
		if be := m["break_even_utilization"].(float64); math.Abs(be-annual/(8*8760*rate)) > 0.00006 {
			t.Errorf("%s %s: break-even %v, want %v", m["provider"], m["offer"], be, annual/(8*8760*rate))
		}
	}
	if s := tco["chart"].(map[string]any)["series"].([]any); len(s) != 4 {
		t.Errorf("chart series %d", len(s))
	}
	if tco["apply_model"] != calcGPU {
		t.Errorf("apply model %v", tco["apply_model"])
	}
}

var runCounter int

// recordRun records a finished run of a flavor directly in the store, as
// the manager does: a workbench row and its usage interval.
func recordRun(t *testing.T, p *testPortal, user *models.User, fl *models.Flavor, start, end time.Time) *models.UsageInterval {
	t.Helper()
	ctx := context.Background()
	imgs, err := p.srv.Store.ListImages(ctx, true)
	if err != nil || len(imgs) == 0 {
		t.Fatalf("images: %v", err)
	}
	runCounter++
	wb := &models.Workbench{Name: fmt.Sprintf("run%d", runCounter), OwnerID: user.ID, ImageID: imgs[0].ID, FlavorID: fl.ID, Token: "t"}
	if err := p.srv.Store.CreateWorkbench(ctx, wb, models.GPUNeed{}, nil); err != nil {
		t.Fatal(err)
	}
	sh := orchestrator.FlavorShape(fl)
	iv := &models.UsageInterval{WorkbenchID: wb.ID, UserID: user.ID, GPUModel: sh.GPUModel, GPUCount: sh.GPUCount, CPUMilli: sh.CPUMilli,
		MemoryMiB: sh.MemoryMiB, StartedAt: start}
	if err := p.srv.Store.OpenInterval(ctx, iv); err != nil {
		t.Fatal(err)
	}
	if err := p.srv.Store.CloseInterval(ctx, wb.ID, end, "stopped"); err != nil {
		t.Fatal(err)
	}
	return iv
}

// ledgerOf sums the ledger lines of the given usage intervals.
func ledgerOf(t *testing.T, p *testPortal, user *models.User, ivs ...*models.UsageInterval) int64 {
	t.Helper()
	lines, err := p.srv.Store.Statement(context.Background(), user.ID, time.Unix(0, 0), time.Now().Add(time.Hour))
	if err != nil {
		t.Fatal(err)
	}
	want := map[int64]bool{}
	for _, iv := range ivs {
		want[iv.ID] = true
	}
	var sum int64
	for _, l := range lines {
		if l.IntervalID != nil && want[*l.IntervalID] {
			sum += l.AmountMicros
		}
	}
	return sum
}

// The calculator prices a shape with the billing's own code: what it
// estimates for a run is what the ledger charges for that run, to the
// micro-unit — across hour boundaries, for daily runs, and for a run under
// the minimum charge.
func TestCalculatorEstimateEqualsLedger(t *testing.T) {
	p := calcPortal(t)
	ctx := context.Background()
	tok := tokenFor(t, p, "dora", "user")
	user, err := p.srv.Store.UserByUsername(ctx, "dora")
	if err != nil {
		t.Fatal(err)
	}
	fl, err := p.srv.Store.FlavorByNameOrID(ctx, "2x H100 80GB HBM3")
	if err != nil {
		t.Fatal(err)
	}
	day := time.Now().UTC().Truncate(24*time.Hour).AddDate(0, 0, -5)
	estimate := func(body string) int64 {
		t.Helper()
		code, out := p.api("POST", "/api/v1/calculator/estimate", tok, body)
		if code != 200 {
			t.Fatalf("estimate %s: %d %v", body, code, out)
		}
		return int64(out["total_micros"].(float64))
	}
	cases := []struct {
		name string
		runs func() []*models.UsageInterval
		body string
	}{
		{"a run across hour boundaries", func() []*models.UsageInterval {
			s := day.Add(9*time.Hour + 47*time.Minute + 13*time.Second)
			return []*models.UsageInterval{recordRun(t, p, user, fl, s, s.Add(2*time.Hour+13*time.Minute+12*time.Second))}
		}, `{"flavor":"2x H100 80GB HBM3","duration":"total","total_hours":2.22,"start":"` + day.Add(9*time.Hour+47*time.Minute+13*time.Second).Format(time.RFC3339) + `"}`},
		{"three daily runs", func() []*models.UsageInterval {
			var out []*models.UsageInterval
			for d := 0; d < 3; d++ {
				s := day.Add(time.Duration(d)*24*time.Hour + 14*time.Hour + 30*time.Minute + 7*time.Second)
				out = append(out, recordRun(t, p, user, fl, s, s.Add(90*time.Minute)))
			}
			return out
		}, `{"flavor":"2x H100 80GB HBM3","hours_per_day":1.5,"days":3,"start":"` + day.Add(14*time.Hour+30*time.Minute+7*time.Second).Format(time.RFC3339) + `"}`},
		{"a run under the minimum charge", func() []*models.UsageInterval {
			s := day.Add(23*time.Hour + 59*time.Minute + 40*time.Second + 400*time.Millisecond) // crosses midnight, a fraction of a second in
			return []*models.UsageInterval{recordRun(t, p, user, fl, s, s.Add(37500*time.Millisecond))}
		}, `{"flavor":"2x H100 80GB HBM3","duration":"total","total_hours":0.0105,"start":"` + day.Add(23*time.Hour+59*time.Minute+40*time.Second).Format(time.RFC3339) + `"}`},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			ivs := c.runs()
			if _, err := p.srv.Manager.Billing().BillOnce(ctx); err != nil {
				t.Fatal(err)
			}
			charged := ledgerOf(t, p, user, ivs...)
			if charged == 0 {
				t.Fatal("nothing in the ledger")
			}
			if got := estimate(c.body); got != charged {
				t.Fatalf("estimate %d, ledger %d (%s)", got, charged, pricing.Format(got-charged))
			}
		})
	}
	// The minimum charge is what made the last case: 37.5 s billed as 60 s.
	code, out := p.api("POST", "/api/v1/calculator/estimate", tok, `{"flavor":"2x H100 80GB HBM3","total_hours":0.0105}`)
	if code != 200 || out["billed_run_seconds"].(float64) != 60 || out["min_charge_applied"] != true {
		t.Fatalf("minimum charge: %v", out)
	}
}

// The same with a real workbench on the engine: launch, run, stop; the
// ledger for the run equals the estimate for its start and length (a run of
// seconds: the minimum charge decides).
func TestCalculatorEstimateEqualsLedgerOfARealWorkbench(t *testing.T) {
	p, _ := enginePortal(t)
	ctx := context.Background()
	if _, err := p.srv.Store.SeedCloudPrices(ctx); err != nil {
		t.Fatal(err)
	}
	tok := tokenFor(t, p, "erin", "user")
	code, wb := p.api("POST", "/api/v1/workbenches", tok, `{"name":"priced","image":"fake","flavor":"`+calcFlavor+`"}`)
	if code != 202 {
		t.Fatalf("launch: %d %v", code, wb)
	}
	id := wb["id"].(string)
	waitState(t, p, tok, id, "running")
	time.Sleep(1500 * time.Millisecond)
	if code, out := p.api("POST", "/api/v1/workbenches/"+id+"/stop", tok, ""); code >= 300 {
		t.Fatalf("stop: %d %v", code, out)
	}
	waitState(t, p, tok, id, "stopped")
	ivs, err := p.srv.Store.IntervalsOf(ctx, id)
	if err != nil || len(ivs) != 1 || ivs[0].EndedAt == nil {
		t.Fatalf("intervals: %v %+v", err, ivs)
	}
	iv := ivs[0]
	if _, err := p.srv.Manager.Billing().BillOnce(ctx); err != nil {
		t.Fatal(err)
	}
	user, _ := p.srv.Store.UserByUsername(ctx, "erin")
	charged := ledgerOf(t, p, user, &iv)
	start := iv.StartedAt.UTC().Truncate(time.Second)
	secs := int64((iv.EndedAt.Sub(start) + time.Second - 1) / time.Second)
	hours := strconv.FormatFloat(float64(secs*1_000_000/3600)/1e6, 'f', 6, 64) // rounded down: ceil(h·3600) = secs
	body, _ := json.Marshal(map[string]string{"flavor": calcFlavor, "duration": "total", "total_hours": hours, "start": start.Format(time.RFC3339)})
	code, out := p.api("POST", "/api/v1/calculator/estimate", tok, string(body))
	if code != 200 {
		t.Fatalf("estimate: %d %v", code, out)
	}
	if got := int64(out["total_micros"].(float64)); got != charged || charged == 0 {
		t.Fatalf("estimate %d, ledger %d for a %d s run", got, charged, secs)
	}
}

func TestCalculatorApplySuggestedRate(t *testing.T) {
	p := calcPortal(t)
	ctx := context.Background()
	admin := p.client()
	p.loginSudo(admin, "admin", adminPassword)
	user := p.client()
	tokenFor(t, p, "finn", "user")
	p.login(user, "finn", "finn-password")
	adminTok := tokenFor(t, p, "admin", "admin")

	query := url.Values{"gpu_model": {calcGPU}, "target_utilization": {"0.6"}, "server_price": {"240000"}}.Encode()
	code, tco := p.api("POST", "/api/v1/calculator/tco", adminTok, `{"gpu_model":"`+calcGPU+`","target_utilization":0.6,"server_price":240000}`)
	if code != 200 {
		t.Fatalf("tco: %d", code)
	}
	suggested := int64(tco["suggested_rate_micros"].(float64))
	// The owned cost covers the whole server, CPUs and memory included;
	// the GPU rate suggested is what is left once the flavor's CPU and
	// memory are charged at their own rates (0.48 an hour for the 1-GPU
	// flavor), so a GPU-hour of it recovers the owned cost, not more.
	owned, _ := tco["target_owned_per_gpu_hour_micros"].(float64)
	share, _ := tco["cpu_memory_share"].(map[string]any)
	// Rounded up to the four decimals a rate is shown with: Apply sets the
	// rate its confirmation names.
	if want := (int64(owned) - 480_000 + 99) / 100 * 100; share["flavor"] != calcFlavor || share["per_gpu_hour_micros"] != float64(480_000) || suggested != want {
		t.Fatalf("suggested %d from owned %v less share %v; want the owned cost less 480000, rounded up to 4 decimals: %d (flavor %s)", suggested, owned, share, want, calcFlavor)
	}
	if suggested%100 != 0 {
		t.Errorf("suggested rate %d has more than four decimals", suggested)
	}

	// A user cannot; the page does not offer it to them either.
	if res := p.postForm(user, "/admin/calculator/apply-rate", url.Values{"query": {query}}); res.StatusCode != http.StatusForbidden {
		t.Fatalf("user apply: %d", res.StatusCode)
	}
	_, page := p.get(admin, "/calculator?"+query)
	doc := parseHTML(t, page)
	if doc.Find(tid("apply-rate-form")+` input[name=query]`).Length() != 1 {
		t.Fatal("the admin is not offered to apply the rate")
	}
	// The page shows rates exact (the suggestion has four decimals).
	if got := moneyText(t, doc.Find(tid("suggested-rate")).Text()); got != suggested {
		t.Errorf("the page suggests %d, the API %d", got, suggested)
	}
	if got := moneyText(t, doc.Find(tid("target-owned")).Text()); got != int64(owned) {
		t.Errorf("the page's owned cost at the target %d, the API's %v", got, owned)
	}
	if note := doc.Find(tid("cpu-memory-share")).Text(); !strings.Contains(note, calcFlavor) || !strings.Contains(note, "0.48") {
		t.Errorf("the page does not say what CPU and memory share was taken off: %q", note)
	}
	// Without JavaScript the portal asks first, and nothing is applied.
	history, err := p.srv.Store.PriceHistory(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	res, body := p.postFormBody(admin, "/admin/calculator/apply-rate", url.Values{"query": {query}})
	later, err := p.srv.Store.PriceHistory(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	if res.StatusCode != http.StatusOK || !strings.Contains(body, "Set the rate of H100 80GB HBM3 to ") || len(later) != len(history) {
		t.Fatalf("apply without the page's yes: %d, %d rates before and %d after", res.StatusCode, len(history), len(later))
	}
	res = p.postForm(admin, "/admin/calculator/apply-rate", url.Values{"query": {query}, "confirmed": {"true"}})
	if res.StatusCode != http.StatusSeeOther || !strings.HasPrefix(res.Header.Get("Location"), "/calculator?") {
		t.Fatalf("apply: %d %s", res.StatusCode, res.Header.Get("Location"))
	}
	cur, err := p.srv.Store.CurrentPrices(ctx, time.Now().Add(time.Second))
	if err != nil {
		t.Fatal(err)
	}
	if r := cur[models.PriceKey(pricing.GPU, calcGPU)]; r.Micros != suggested || r.IsDefault || r.CreatedBy != "admin" {
		t.Fatalf("rate in force %+v, want %d", r, suggested)
	}
	audit, err := p.srv.Store.ListAudit(ctx, 10)
	if err != nil {
		t.Fatal(err)
	}
	found := false
	inForce := cur[models.PriceKey(pricing.GPU, calcGPU)]
	for _, a := range audit {
		if a.Action == "price.set" && strings.Contains(a.After, "calculator TCO") && strings.Contains(a.Before, "3000000") {
			found = true
			// The record names the rate as stored: its id and effective time
			// (they were 0 and year 1, the request before it was stored).
			var after struct{ Rate models.PriceRate }
			if err := json.Unmarshal([]byte(a.After), &after); err != nil {
				t.Fatal(err)
			}
			if after.Rate.ID != inForce.ID || !after.Rate.EffectiveFrom.Equal(inForce.EffectiveFrom) {
				t.Errorf("the audit records rate id %d effective %s; the rate in force is id %d effective %s",
					after.Rate.ID, after.Rate.EffectiveFrom, inForce.ID, inForce.EffectiveFrom)
			}
		}
	}
	if !found {
		t.Fatalf("no audit entry: %+v", audit)
	}
	// The calculator now prices at the new rate.
	_, body = p.get(admin, "/calculator?flavor="+url.QueryEscape(calcFlavor)+"&duration=total&total_hours=1")
	if got := parseHTML(t, body).Find(tid("estimate-per-hour")).Text(); got != pricing.Format(int64(owned))+" USD" {
		t.Errorf("an hour of %s after the change costs %s, want the owned cost %s", calcFlavor, got, pricing.Format(int64(owned)))
	}
	// The API does the same; a model this portal does not price cannot be applied.
	if code, out := p.api("POST", "/api/v1/admin/calculator/apply-rate", adminTok, `{"gpu_model":"`+calcGPU+`","target_utilization":0.9}`); code != 200 || out["added"] == nil {
		t.Fatalf("API apply: %d %v", code, out)
	}
	if code, out := p.api("POST", "/api/v1/admin/calculator/apply-rate", adminTok, `{"gpu_model":"A100-80GB"}`); code != 400 || errCode(out) != "invalid_gpu_model" {
		t.Fatalf("apply to an unpriced model: %d %v", code, out)
	}

	// CPU and memory rates that alone charge more than the owned cost
	// leave no GPU rate to apply: refused with the reason, the rate kept,
	// and the page offers no Apply but says why.
	if code, out := p.api("PUT", "/api/v1/admin/prices", adminTok, `{"rates":[{"resource":"cpu","rate_micros":50000000}]}`); code != 200 {
		t.Fatalf("set a CPU rate: %d %v", code, out)
	}
	before, err := p.srv.Store.CurrentPrices(ctx, time.Now().Add(time.Second))
	if err != nil {
		t.Fatal(err)
	}
	code, out := p.api("POST", "/api/v1/admin/calculator/apply-rate", adminTok, `{"gpu_model":"`+calcGPU+`","target_utilization":0.6,"server_price":240000}`)
	e, _ := out["error"].(map[string]any)
	if msg, _ := e["message"].(string); code != 400 || errCode(out) != "invalid_target_utilization" || !strings.Contains(msg, "no GPU rate to apply") {
		t.Fatalf("apply with CPU and memory over the owned cost: %d %v", code, out)
	}
	after, err := p.srv.Store.CurrentPrices(ctx, time.Now().Add(time.Second))
	if err != nil {
		t.Fatal(err)
	}
	if k := models.PriceKey(pricing.GPU, calcGPU); after[k].ID != before[k].ID {
		t.Errorf("a refused apply changed the rate: %+v → %+v", before[k], after[k])
	}
	_, page = p.get(admin, "/calculator?"+query)
	doc = parseHTML(t, page)
	if doc.Find(tid("apply-rate-form")).Length() != 0 || doc.Find(tid("suggested-rate")).Length() != 0 || !strings.Contains(doc.Find("#tco").Text(), "no GPU rate to apply") {
		t.Errorf("with CPU and memory over the owned cost the page still offers a rate, or does not say why")
	}
}

func TestCloudPricesAdmin(t *testing.T) {
	p := calcPortal(t)
	ctx := context.Background()
	adminTok := tokenFor(t, p, "admin", "admin")
	userTok := tokenFor(t, p, "gus", "user")
	admin := p.client()
	p.loginSudo(admin, "admin", adminPassword)

	// Seeded once from the shipped CSV, with dates and sources.
	rows, err := p.srv.Store.ListCloudPrices(ctx)
	if err != nil || len(rows) != 46 {
		t.Fatalf("seeded rows %d (%v)", len(rows), err)
	}
	if n, err := p.srv.Store.SeedCloudPrices(ctx); n != 0 || err != nil {
		t.Fatalf("seeding again added %d (%v)", n, err)
	}
	code, list := p.api("GET", "/api/v1/cloud-prices", userTok, "")
	if code != 200 || len(list["items"].([]any)) != 46 {
		t.Fatalf("list: %d", code)
	}

	// CRUD through the API, admins only.
	body := `{"provider":"Acme","offer":"a1.h100","gpu_model":"H100-80GB","gpus_in_offer":8,"tier":"on-demand","currency":"USD","price_per_gpu_hour":"0.99","as_of":"2026-10","source":"Acme price sheet"}`
	if code, _ := p.api("POST", "/api/v1/admin/cloud-prices", userTok, body); code != 403 {
		t.Fatalf("user create: %d", code)
	}
	code, created := p.api("POST", "/api/v1/admin/cloud-prices", adminTok, body)
	if code != 201 || created["price_per_gpu_hour_micros"].(float64) != 990_000 {
		t.Fatalf("create: %d %v", code, created)
	}
	id := int64(created["id"].(float64))
	if code, out := p.api("POST", "/api/v1/admin/cloud-prices", adminTok, body); code != 409 {
		t.Fatalf("duplicate: %d %v", code, out)
	}
	for _, bad := range []string{
		strings.Replace(body, `"on-demand"`, `"cheap"`, 1), strings.Replace(body, `"0.99"`, `"-1"`, 1),
		strings.Replace(body, `"USD"`, `"dollars"`, 1), strings.Replace(body, `"2026-10"`, `"last week"`, 1),
		strings.Replace(body, `"Acme price sheet"`, `""`, 1),
	} {
		if code, out := p.api("POST", "/api/v1/admin/cloud-prices", adminTok, bad); code != 400 {
			t.Errorf("bad row accepted: %d %v", code, out)
		}
	}
	// The cheapest offer now leads the comparison.
	code, est := p.api("POST", "/api/v1/calculator/estimate", userTok, `{"flavor":"`+calcFlavor+`","total_hours":10}`)
	first := est["cloud"].([]any)[0].(map[string]any)
	if code != 200 || first["provider"] != "Acme" {
		t.Errorf("cheapest offer %v", first)
	}
	upd := strings.Replace(body, `"0.99"`, `1.25`, 1)
	if code, out := p.api("PUT", fmt.Sprintf("/api/v1/admin/cloud-prices/%d", id), adminTok, upd); code != 200 || out["price_per_gpu_hour_micros"].(float64) != 1_250_000 {
		t.Fatalf("update: %d %v", code, out)
	}
	if code, _ := p.api("DELETE", fmt.Sprintf("/api/v1/admin/cloud-prices/%d", id), adminTok, ""); code != 204 {
		t.Fatalf("delete: %d", code)
	}
	if code, _ := p.api("DELETE", fmt.Sprintf("/api/v1/admin/cloud-prices/%d", id), adminTok, ""); code != 404 {
		t.Fatalf("delete again: %d", code)
	}

	// The admin page and its forms.
	res, page := p.get(admin, "/admin/cloud-prices")
	if res.StatusCode != 200 || parseHTML(t, page).Find(tid("cloud-price-row")).Length() != 46 {
		t.Fatalf("admin page: %d", res.StatusCode)
	}
	res = p.postForm(admin, "/admin/cloud-prices", url.Values{"provider": {"Form Co"}, "offer": {"f1"}, "gpu_model": {"H100-80GB"},
		"gpus_in_offer": {"1"}, "tier": {"spot"}, "currency": {"USD"}, "price_per_gpu_hour": {"1.11"}, "as_of": {"2026-11-01"}, "source": {"call"}})
	if res.StatusCode != http.StatusSeeOther {
		t.Fatalf("form create: %d", res.StatusCode)
	}
	res = p.postForm(admin, "/admin/cloud-prices", url.Values{"provider": {"Form Co"}, "offer": {"f2"}, "gpu_model": {"H100-80GB"},
		"tier": {"spot"}, "currency": {"USD"}, "price_per_gpu_hour": {"abc"}, "source": {"call"}})
	if res.StatusCode != http.StatusBadRequest {
		t.Fatalf("bad form: %d", res.StatusCode)
	}
	if res, _ := p.get(p.client(), "/admin/cloud-prices"); res.StatusCode != http.StatusSeeOther {
		t.Fatalf("anonymous: %d", res.StatusCode)
	}

	// Before an admin sets a CNY rate the market's A100 figures convert at
	// the shipped 7.2 CNY per USD; with the admin's rate, at that one.
	code, tco := p.api("POST", "/api/v1/calculator/tco", userTok, `{"gpu_model":"A100-80GB"}`)
	if code != 200 || len(tco["cloud_left_out"].(map[string]any)) != 0 {
		t.Fatalf("before the rate: %d %v", code, tco["cloud_left_out"])
	}
	for _, o := range tco["offers"].([]any) {
		if m := o.(map[string]any); m["offer"] == "A100 80GB instance" && m["tier"] == "on-demand" && m["rate_per_gpu_hour_micros"].(float64) != 1_666_667 {
			t.Errorf("12 CNY at the default 7.2 CNY per USD: %v", m)
		}
	}
	res = p.postForm(admin, "/admin/cloud-prices/settings", url.Values{"fx_CNY": {"0.14"}, "fx_asof_CNY": {"2026-11-30"}, "fx_source_CNY": {"the lab's bank"},
		"discount_spot": {"50"}, "discount_reserved-1y": {""}, "discount_reserved-3y": {"55"}})
	if res.StatusCode != http.StatusSeeOther {
		t.Fatalf("settings: %d", res.StatusCode)
	}
	if res := p.postForm(admin, "/admin/cloud-prices/settings", url.Values{"fx_CNY": {"-1"}, "discount_spot": {"120"}}); res.StatusCode != http.StatusBadRequest {
		t.Fatalf("bad settings: %d", res.StatusCode)
	}
	_, tco = p.api("POST", "/api/v1/calculator/tco", userTok, `{"gpu_model":"A100-80GB"}`)
	var seed, derivedSpot map[string]any
	for _, o := range tco["offers"].([]any) {
		m := o.(map[string]any)
		if m["offer"] == "A100 80GB instance" && m["tier"] == "on-demand" {
			seed = m
		}
		if m["provider"] == "AWS" && m["tier"] == "spot" {
			derivedSpot = m
		}
	}
	if seed == nil || seed["rate_per_gpu_hour_micros"].(float64) != 1_680_000 || seed["currency"] != "CNY" || seed["exchange_rate_micros"].(float64) != 140_000 {
		t.Fatalf("seed A100 at 12 CNY: %v", seed)
	}
	if derivedSpot == nil || derivedSpot["estimate"] != true || derivedSpot["rate_per_gpu_hour_micros"].(float64) != 1_715_500 {
		t.Fatalf("AWS spot estimate at 50%% off 3.431: %v", derivedSpot)
	}
	_, page = p.get(admin, "/calculator")
	if !strings.Contains(parseHTML(t, page).Find(tid("fx-rates")).Text(), "1 CNY = 0.14 USD (2026-11-30, the lab's bank)") {
		t.Error("the exchange rate is not shown on the calculator")
	}
	code, set := p.api("PUT", "/api/v1/admin/calculator/settings", adminTok, `{"discounts_bps":{"reserved-1y":3000},"exchange_rates_micros":{"CNY":0}}`)
	if rates, _ := set["exchange_rates"].([]any); len(rates) != 1 || rates[0].(map[string]any)["default"] != true || rates[0].(map[string]any)["rate_micros"].(float64) != 7_200_000 {
		t.Errorf("the shipped rate is not back in force once the admin's is removed: %v", set["exchange_rates"])
	}
	if code != 200 || set["exchange_rates_micros"].(map[string]any)["CNY"] != nil ||
		set["discounts"].(map[string]any)["reserved-1y"].(map[string]any)["bps"].(float64) != 3000 ||
		set["discounts"].(map[string]any)["spot"].(map[string]any)["bps"].(float64) != 5000 {
		t.Fatalf("settings API: %d %v", code, set)
	}
	// GET gives the discounts in the shape PUT takes too: a script reads
	// them, changes one and sends them back.
	bps, _ := set["discounts_bps"].(map[string]any)
	if bps["reserved-1y"] != float64(3000) || bps["spot"] != float64(5000) {
		t.Fatalf("discounts_bps %v, want reserved-1y 3000 and spot 5000", set["discounts_bps"])
	}
	// A rate given the other way round (GET's list reads "1 USD = 7.2
	// CNY") is refused, naming the direction, and changes nothing.
	code, refused := p.api("PUT", "/api/v1/admin/calculator/settings", adminTok, `{"exchange_rates_micros":{"CNY":7100000}}`)
	if msg := fmt.Sprint(refused["error"]); code != 400 || !strings.Contains(msg, "USD micro-units per 1 CNY") || !strings.Contains(msg, "other way round") {
		t.Errorf("CNY at 7100000 (7.1 USD per CNY): %d %v", code, refused)
	}
	if cs, _ := p.srv.Store.CalculatorSettings(ctx); cs.FXMicros["CNY"] != 0 {
		t.Errorf("the refused rate was stored: %v", cs.FXMicros)
	}
	if code, ok := p.api("PUT", "/api/v1/admin/calculator/settings", adminTok, `{"exchange_rates_micros":{"CNY":141000}}`); code != 200 {
		t.Errorf("a plausible CNY rate: %d %v", code, ok)
	}
	bps["spot"] = 4000
	back, _ := json.Marshal(map[string]any{"discounts_bps": bps})
	if code, again := p.api("PUT", "/api/v1/admin/calculator/settings", adminTok, string(back)); code != 200 ||
		again["discounts"].(map[string]any)["spot"].(map[string]any)["bps"].(float64) != 4000 ||
		again["discounts"].(map[string]any)["reserved-1y"].(map[string]any)["bps"].(float64) != 3000 {
		t.Fatalf("PUT of the discounts_bps read back with spot changed: %d %v", code, again)
	}
	audit, _ := p.srv.Store.ListAudit(ctx, 50)
	actions := map[string]int{}
	for _, a := range audit {
		actions[a.Action]++
	}
	for _, a := range []string{"cloud_price.create", "cloud_price.update", "cloud_price.delete", "calculator.settings"} {
		if actions[a] == 0 {
			t.Errorf("no %s in the audit log", a)
		}
	}
}

// A portal without GPUs and with an empty catalog still calculates: a CPU
// flavor priced here, no cloud comparison, a TCO from typical values with no
// offer to compare.
func TestCalculatorWithoutGPUsOrCatalog(t *testing.T) {
	p := newPortal(t, func(c *web.Config) { c.GPUs = "none" })
	ctx := context.Background()
	rows, err := p.srv.Store.ListCloudPrices(ctx) // seeded by bootstrap, or not: empty it either way
	if err != nil {
		t.Fatal(err)
	}
	for _, r := range rows {
		if err := p.srv.Store.DeleteCloudPrice(ctx, r.ID); err != nil {
			t.Fatal(err)
		}
	}
	c := p.client()
	p.login(c, "admin", adminPassword)
	res, body := p.get(c, "/calculator")
	if res.StatusCode == http.StatusNotFound {
		t.Fatal("the calculator routes are not registered: Routes must call h.calculatorRoutes(ui, admin, api, apiAdmin)")
	}
	if res.StatusCode != http.StatusOK {
		t.Fatalf("GET /calculator: %d", res.StatusCode)
	}
	noNaN(t, "the page", body)
	doc := parseHTML(t, body)
	if doc.Find(tid("estimate-total")).Length() != 1 || doc.Find(tid("cloud-note")).Length() != 1 {
		t.Error("the CPU flavor is not priced, or the missing comparison is not explained")
	}
	if doc.Find(tid("owned-per-gpu-hour")).Length() != 1 || doc.Find(tid("tco-no-offers")).Length() != 1 {
		t.Error("the TCO without offers")
	}
	if n := doc.Find(tid("tco-chart") + " " + tid("chart-series")).Length(); n != 1 {
		t.Errorf("chart series %d, want owning alone", n)
	}
}

// The calculator API's text amounts have the portal currency's decimals:
// none in a yen portal (they had two whatever the currency), the exact
// micro-units beside them.
func TestCalculatorAPITextAmountsUseTheCurrencysDecimals(t *testing.T) {
	p := newPortal(t, func(c *web.Config) { c.Currency = "JPY" })
	tok := tokenFor(t, p, "yuki", "user")
	code, est := p.api("POST", "/api/v1/calculator/estimate", tok, `{"flavor":"`+calcFlavor+`","total_hours":3,"duration":"total"}`)
	if code != 200 {
		t.Fatalf("estimate: %d %v", code, est)
	}
	code, tco := p.api("POST", "/api/v1/calculator/tco", tok, `{"gpu_model":"`+calcGPU+`","server_price":30000000}`)
	if code != 200 {
		t.Fatalf("tco: %d %v", code, tco)
	}
	for _, f := range []struct {
		body        map[string]any
		text, exact string
	}{{est, "total", "total_micros"}, {est, "per_hour", "per_hour_micros"}, {tco, "annual_cost", "annual_cost_micros"}} {
		text, _ := f.body[f.text].(string)
		exact, _ := f.body[f.exact].(float64)
		if want := pricing.Micros(int64(exact)).Decimal("JPY"); text != want || strings.Contains(text, ".") || exact == 0 {
			t.Errorf("%s = %q for %s %v, want %q (no decimals in yen)", f.text, text, f.exact, exact, want)
		}
	}
}

// A rate change scheduled inside the month the calculator prices is named
// beside the table: the per-month column counts the new rate from then and
// is no longer 730 × the hourly column, which read as a miscount.
func TestCalculatorNamesAScheduledRateChange(t *testing.T) {
	p := newPortal(t)
	tokenFor(t, p, "ada", "user")
	c := p.client()
	p.login(c, "ada", "ada-password")
	page := "/calculator?flavor=" + url.QueryEscape(calcFlavor) + "&duration=total&total_hours=1"
	if _, body := p.get(c, page); parseHTML(t, body).Find(tid("calc-rate-change")).Length() != 0 {
		t.Fatal("a rate change is named with none scheduled")
	}
	from := time.Now().UTC().Add(10 * 24 * time.Hour).Truncate(time.Hour)
	if err := p.srv.Store.AddPriceRate(context.Background(), &models.PriceRate{Resource: "gpu", GPUModel: calcGPU, Micros: 9_000_000,
		EffectiveFrom: from, CreatedBy: "admin"}); err != nil {
		t.Fatal(err)
	}
	_, body := p.get(c, page)
	if got := parseHTML(t, body).Find(tid("calc-rate-change")).Text(); !strings.Contains(got, from.Format("2006-01-02")) || !strings.Contains(got, "per-month") {
		t.Fatalf("the calculator's note on the change reads %q", got)
	}
}
