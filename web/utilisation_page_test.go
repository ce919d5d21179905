package web_test

import (
	"context"
	"encoding/csv"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/PuerkitoBio/goquery"

	"workbench/models"
	"workbench/models/pricing"
)

// The admin's utilisation dashboard over a fixture of rollup rows: totals,
// per-model, user, group and top idle rows, an SVG bar per day, CSV; users
// see only their own held vs used on /usage; users cannot open the
// dashboard; bad input is refused with a clear error.
func TestUtilisationDashboard(t *testing.T) {
	p := newPortal(t)
	ctx := context.Background()
	s := p.srv.Store
	admin, _ := mpAdmin(t, p)
	wb := energyFixture(t, p, 0) // ada's workbench "llm-train", interval from the month's start
	ada, _ := s.UserByUsername(ctx, "ada")
	g, err := s.CreateGroup(ctx, "nlp", "")
	if err != nil {
		t.Fatal(err)
	}
	_ = s.AddGroupMember(ctx, g.ID, ada.ID)
	prices, _ := s.CurrentPrices(ctx, time.Now())
	var model string
	var rate int64
	for _, r := range prices {
		if r.Resource == pricing.GPU {
			model, rate = r.GPUModel, r.Micros
			break
		}
	}
	if model == "" {
		t.Fatal("no seeded GPU rate")
	}
	// Today 00:00–01:00: GPU-A held by ada at 25%, GPU-B unheld; plus six
	// unread held minutes on GPU-C (neither busy nor idle).
	day := time.Now().UTC().Truncate(24 * time.Hour)
	var rows []models.GPUMinute
	for i := 0; i < 60; i++ {
		at := day.Add(time.Duration(i) * time.Minute).Unix()
		rows = append(rows,
			models.GPUMinute{GPUUUID: "GPU-A", Minute: at, Samples: 4, UtilSamples: 4, UtilSum: 100, WorkbenchID: wb.ID, GPUModel: model},
			models.GPUMinute{GPUUUID: "GPU-B", Minute: at, Samples: 4, UtilSamples: 4, GPUModel: model})
	}
	for i := 0; i < 6; i++ {
		rows = append(rows, models.GPUMinute{GPUUUID: "GPU-C", Minute: day.Add(time.Duration(i) * time.Minute).Unix(), Samples: 4,
			UnreadSamples: 4, WorkbenchID: wb.ID, GPUModel: model})
	}
	if err := s.SaveGPUMinutes(ctx, rows); err != nil {
		t.Fatal(err)
	}

	res, body := p.get(admin, "/admin/utilisation")
	if res.StatusCode != http.StatusOK {
		t.Fatalf("dashboard: %d", res.StatusCode)
	}
	doc := mpDoc(t, body)
	txt := func(sel string) string { return strings.TrimSpace(doc.Find(sel).First().Text()) }
	if txt(`[data-testid=total-available]`) != "2.1" || txt(`[data-testid=total-allocated]`) != "1.1" || txt(`[data-testid=total-busy]`) != "0.3" {
		t.Errorf("totals: available %q allocated %q busy %q (want 2.1, 1.1, 0.3 GPU-h)", txt(`[data-testid=total-available]`),
			txt(`[data-testid=total-allocated]`), txt(`[data-testid=total-busy]`))
	}
	want := func(micros int64) string { return pricing.Format(micros) + " USD" }
	if got := txt(`[data-testid=total-unheld-cost]`); got != want(rate) {
		t.Errorf("unheld cost %q, want one GPU-hour at the rate: %q", got, want(rate))
	}
	if got := txt(`[data-testid=total-idle-cost]`); got != want((rate*3+2)/4) {
		t.Errorf("held idle cost %q, want 3/4 GPU-hour: %q", got, want((rate*3+2)/4))
	}
	if n := doc.Find(`[data-testid=utilisation-bar]`).Length(); n != 30 {
		t.Errorf("%d bars, want one per day of the last 30", n)
	}
	today := doc.Find(`[data-testid=utilisation-bar][data-label="` + day.Format("01-02") + `"]`)
	kinds := map[string]bool{}
	today.Find("rect").Each(func(_ int, r *goquery.Selection) { k, _ := r.Attr("data-kind"); kinds[k] = true })
	if !kinds["busy"] || !kinds["idle"] || !kinds["unheld"] || !kinds["unread"] {
		t.Errorf("today's bar segments %v", kinds)
	}
	if r := doc.Find(`[data-testid=utilisation-users] [data-key=ada]`); !strings.Contains(r.Find(`[data-testid=u-busy]`).Text(), "25%") {
		t.Errorf("ada's row: %q", r.Text())
	}
	if doc.Find(`[data-testid=utilisation-groups] [data-key=nlp]`).Length() != 1 {
		t.Error("no nlp group row")
	}
	if doc.Find(`[data-testid=utilisation-top-idle] [data-key="ada/llm-train"]`).Length() != 1 {
		t.Error("ada's workbench is not among the top idle holders")
	}
	// GPU-B is unheld at 0%: not "held below"; GPU-A held at 25%.
	if r := doc.Find(`[data-testid=utilisation-gpu-row][data-key=GPU-A]`); !strings.HasPrefix(strings.TrimSpace(r.Find(`[data-testid=u-busy]`).Text()), "0.3") ||
		!strings.HasPrefix(strings.TrimSpace(r.Find(`[data-testid=u-held-low]`).Text()), "0.0") {
		t.Errorf("GPU-A row %q", r.Text())
	}

	res, body = p.get(admin, "/admin/utilisation.csv?bucket=week")
	recs, err := csv.NewReader(strings.NewReader(strings.TrimPrefix(body, "\ufeff"))).ReadAll()
	if err != nil || res.StatusCode != 200 {
		t.Fatalf("csv: %d %v", res.StatusCode, err)
	}
	var total []string
	for _, r := range recs {
		if r[0] == "total" {
			total = r
		}
	}
	if total == nil || total[2] != "2.1" || total[4] != "0.3" || total[7] != itoa(rate) {
		t.Errorf("csv total row %v", total)
	}
	gpus := 0
	for _, r := range recs {
		if r[0] == "gpu" {
			gpus++
		}
	}
	if gpus != 3 {
		t.Errorf("csv has %d gpu rows, want GPU-A, GPU-B and GPU-C", gpus)
	}

	for _, bad := range []string{"?bucket=year", "?from=yesterday", "?from=2026-02-01&to=2026-01-01"} {
		if res, _ := p.get(admin, "/admin/utilisation"+bad); res.StatusCode != http.StatusBadRequest {
			t.Errorf("%s: %d, want 400", bad, res.StatusCode)
		}
	}

	c := p.client()
	p.login(c, "ada", "ada-password")
	if res, _ := p.get(c, "/admin/utilisation"); res.StatusCode != http.StatusForbidden && res.StatusCode != http.StatusSeeOther {
		t.Errorf("a user opened the dashboard: %d", res.StatusCode)
	}
	_, body = p.get(c, "/usage")
	doc = mpDoc(t, body)
	// Held is the GPU-hours bar's (billing: running since the month's
	// start); the rollup fixture is what the telemetry measured.
	if bar, _ := barHours(t, doc); txt(`[data-testid=held-hours]`) != bar || txt(`[data-testid=measured-hours]`) != "1.10" ||
		txt(`[data-testid=used-hours]`) != "0.25" || txt(`[data-testid=used-percent]`) != "25%" {
		t.Errorf("held vs used (bar %q): %q", bar, doc.Find(`[data-testid=held-vs-used]`).Text())
	}
	if !strings.Contains(txt(`[data-testid=held-unread]`), "0.10") {
		t.Errorf("unread note %q", txt(`[data-testid=held-unread]`))
	}
}

// A shared slice's holder sees it in /usage "held vs used": two slices of
// a GPU shared in four are half a GPU-hour an hour, and the unit-hours are
// said apart from the GPU-hours. The admin dashboard counts the shared
// GPU's held half as allocated, the other half as nobody's.
func TestUsageHeldVsUsedCountsSliceHolders(t *testing.T) {
	p := newPortal(t)
	ctx := context.Background()
	s := p.srv.Store
	admin, _ := mpAdmin(t, p)
	day := time.Now().UTC().Truncate(24 * time.Hour)
	wb := heldFixture(t, p, day, models.UnitSlice) // billed in slice-hours: no whole GPU
	var rows []models.GPUMinute
	var units []models.GPUUnitMinute
	for i := 0; i < 60; i++ {
		at := day.Add(time.Duration(i) * time.Minute).Unix()
		rows = append(rows, models.GPUMinute{GPUUUID: "GPU-S", Minute: at, Samples: 4, UnreadSamples: 4, GPUModel: "NVIDIA H100 80GB HBM3"})
		units = append(units, models.GPUUnitMinute{UnitUUID: "GPU-S", WorkbenchID: wb.ID, Minute: at, GPUUUID: "GPU-S", Kind: models.UnitSlice,
			GPUModel: "NVIDIA H100 80GB HBM3", Samples: 4, UtilSamples: 4, UtilSum: 160, MemSamples: 4, Units: 2, GPUUnits: 4})
	}
	if err := s.SaveGPURollup(ctx, rows, units); err != nil {
		t.Fatal(err)
	}
	c := p.client()
	p.login(c, "ada", "ada-password")
	_, body := p.get(c, "/usage")
	doc := mpDoc(t, body)
	txt := func(sel string) string { return strings.TrimSpace(doc.Find(sel).First().Text()) }
	if txt(`[data-testid=held-hours]`) != "0.50" || txt(`[data-testid=measured-hours]`) != "0.50" || txt(`[data-testid=used-hours]`) != "0.20" ||
		txt(`[data-testid=used-percent]`) != "40%" {
		t.Errorf("held vs used: %q", doc.Find(`[data-testid=held-vs-used]`).Text())
	}
	if u := txt(`[data-testid=held-units]`); !strings.Contains(u, "0.50 of the GPU-hours held") || !strings.Contains(u, "1.00 unit-hours") {
		t.Errorf("unit note %q, want 0.50 GPU-hours as 1.00 unit-hours", u)
	}
	_, body = p.get(admin, "/admin/utilisation")
	doc = mpDoc(t, body)
	if txt(`[data-testid=total-available]`) != "1.0" || txt(`[data-testid=total-allocated]`) != "0.5" {
		t.Errorf("dashboard totals: available %q allocated %q, want 1.0 and 0.5", txt(`[data-testid=total-available]`), txt(`[data-testid=total-allocated]`))
	}
	if doc.Find(`[data-testid=utilisation-users] [data-key=ada]`).Length() != 1 {
		t.Error("the slice holder has no user row")
	}
	// Per-GPU rows (GPU-hours, with a sparkline) and per-unit rows
	// (unit-hours), with held below the threshold and energy.
	g := doc.Find(`[data-testid=utilisation-gpus] [data-testid=utilisation-gpu-row][data-key=GPU-S]`)
	if g.Length() != 1 || strings.TrimSpace(g.Find(`[data-testid=u-available]`).Text()) != "1.0" ||
		!strings.HasPrefix(strings.TrimSpace(g.Find(`[data-testid=u-allocated]`).Text()), "0.5") ||
		!strings.HasPrefix(strings.TrimSpace(g.Find(`[data-testid=u-held-low]`).Text()), "0.0") ||
		strings.TrimSpace(g.Find(`[data-testid=u-energy]`).Text()) != "not measured" {
		t.Errorf("GPU-S row %q", g.Text())
	}
	if pts, ok := g.Find(`[data-testid=gpu-spark] polyline`).Attr("points"); !ok || pts == "" {
		t.Errorf("GPU-S has no sparkline: %q", pts)
	}
	u := doc.Find(`[data-testid=utilisation-units] [data-testid=utilisation-unit-row][data-kind=slice]`)
	if u.Length() != 1 || strings.TrimSpace(u.Find(`[data-testid=u-holder]`).Text()) != "ada/llm-train" ||
		!strings.HasPrefix(strings.TrimSpace(u.Find(`[data-testid=u-allocated]`).Text()), "1.0") ||
		!strings.HasPrefix(strings.TrimSpace(u.Find(`[data-testid=u-busy]`).Text()), "0.4") {
		t.Errorf("slice holder unit row %q", u.Text())
	}
	_, body = p.get(admin, "/admin/utilisation.csv")
	recs, err := csv.NewReader(strings.NewReader(strings.TrimPrefix(body, "\ufeff"))).ReadAll()
	if err != nil {
		t.Fatal(err)
	}
	var gpuRow, unitRow []string
	for _, r := range recs {
		switch r[0] {
		case "gpu":
			gpuRow = r
		case "unit":
			unitRow = r
		}
	}
	if recs[0][10] != "held_below_threshold_hours" || recs[0][12] != "energy_mj" {
		t.Errorf("csv header %v", recs[0])
	}
	if gpuRow == nil || gpuRow[1] != "GPU-S" || gpuRow[3] != "0.5" || gpuRow[12] != "" || gpuRow[13] != "NVIDIA H100 80GB HBM3" {
		t.Errorf("csv gpu row %v", gpuRow)
	}
	if unitRow == nil || unitRow[3] != "1.0" || unitRow[14] != "slice" || unitRow[16] != "ada/llm-train" {
		t.Errorf("csv unit row %v", unitRow)
	}
}

// Held GPU time whose utilisation could not be read at all says so: how
// much was used is unknown (it read "used 0.00 of them (0%)").
func TestUsageHeldVsUsedUnknownWhenNothingWasRead(t *testing.T) {
	p := newPortal(t)
	ctx := context.Background()
	wb := energyFixture(t, p, 0)
	// A whole GPU held by ada's workbench for an hour, no sample read.
	day := time.Now().UTC().Truncate(24 * time.Hour)
	var rows []models.GPUMinute
	for i := 0; i < 60; i++ {
		rows = append(rows, models.GPUMinute{GPUUUID: "GPU-U", Minute: day.Add(time.Duration(i) * time.Minute).Unix(), Samples: 4,
			UnreadSamples: 4, WorkbenchID: wb.ID, GPUModel: "NVIDIA H100 80GB HBM3"})
	}
	if err := p.srv.Store.SaveGPUMinutes(ctx, rows); err != nil {
		t.Fatal(err)
	}
	c := p.client()
	p.login(c, "ada", "ada-password")
	_, body := p.get(c, "/usage")
	doc := mpDoc(t, body)
	bar, _ := barHours(t, doc) // held: the billing's, running since the month's start
	if doc.Find(`[data-testid=used-percent]`).Length() != 0 || strings.TrimSpace(doc.Find(`[data-testid=held-hours]`).Text()) != bar ||
		!strings.Contains(doc.Find(`[data-testid=held-unknown]`).Text(), "unknown") ||
		!strings.Contains(doc.Find(`[data-testid=held-unknown]`).Text(), "measured 1.00 GPU-hours") {
		t.Errorf("held vs used with nothing read: %q", strings.Join(strings.Fields(doc.Find(`[data-testid=held-vs-used]`).Text()), " "))
	}
}
