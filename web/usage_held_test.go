package web_test

import (
	"context"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/PuerkitoBio/goquery"

	"workbench/models"
)

// heldFixture is ada's workbench "llm-train" running since started on one
// unit of kind (a whole GPU, or a slice of a shared H100), as the billing
// meters it; no telemetry yet.
func heldFixture(t *testing.T, p *testPortal, started time.Time, kind string) *models.Workbench {
	t.Helper()
	ctx := context.Background()
	s := p.srv.Store
	tokenFor(t, p, "ada", "user")
	ada, err := s.UserByUsername(ctx, "ada")
	if err != nil {
		t.Fatal(err)
	}
	imgs, _ := s.ListImages(ctx, false)
	fls, _ := s.ListFlavors(ctx, false)
	wb := &models.Workbench{Name: "llm-train", OwnerID: ada.ID, ImageID: imgs[0].ID, FlavorID: fls[0].ID, Token: "t"}
	if err := s.CreateWorkbench(ctx, wb, models.GPUNeed{}, nil); err != nil {
		t.Fatal(err)
	}
	iv := &models.UsageInterval{WorkbenchID: wb.ID, UserID: ada.ID, GPUModel: "NVIDIA H100 80GB HBM3", GPUCount: 1, StartedAt: started}
	if kind != models.UnitGPU {
		iv.UnitKind = kind
		if err := s.SeedUnitPrice(ctx, kind, iv.GPUModel, iv.GPUModel); err != nil { // as sharing the GPU would
			t.Fatal(err)
		}
	}
	if err := s.OpenInterval(ctx, iv); err != nil {
		t.Fatal(err)
	}
	return wb
}

// barHours is the GPU-hours bar's figure on a /usage page ("0.03" of
// "0.03 / unlimited") and the GPU-seconds behind it.
func barHours(t *testing.T, doc *goquery.Document) (string, int64) {
	t.Helper()
	bar := doc.Find(`[data-testid=quota-bar-gpu-hours]`)
	used, _ := bar.Attr("data-used")
	secs, err := strconv.ParseInt(used, 10, 64)
	if bar.Length() != 1 || err != nil {
		t.Fatalf("no GPU-hours bar (data-used %q)", used)
	}
	figures := strings.TrimSpace(bar.Find(`[data-testid=quota-figures]`).Text())
	return strings.TrimSpace(strings.SplitN(figures, "/", 2)[0]), secs
}

// skipNearMonthStart skips a test whose run of a few minutes must lie in
// one month (the bar counts the month's part only).
func skipNearMonthStart(t *testing.T) {
	if time.Since(models.MonthStart(time.Now())) < 5*time.Minute {
		t.Skip("too close to the start of the month for a run begun minutes ago")
	}
}

// A workbench 90 s into its run, its first minute rolled up, the rest not
// yet: "You held" reads the GPU-hours bar's figure (billing, to the
// second), not the rollup's completed minute (it read 0.02 beside the
// bar's 0.03), and the telemetry's minute is named as what it measured.
// Before any minute is rolled up, held is already the bar's and the use
// is said to be not known yet.
func TestUsageHeldMatchesGPUHoursBar(t *testing.T) {
	skipNearMonthStart(t)
	p := newPortal(t)
	ctx := context.Background()
	now := time.Now().UTC()
	wb := heldFixture(t, p, now.Add(-90*time.Second), models.UnitGPU)
	c := p.client()
	p.login(c, "ada", "ada-password")
	text := func(doc *goquery.Document, sel string) string { return strings.TrimSpace(doc.Find(sel).First().Text()) }

	_, body := p.get(c, "/usage")
	doc := mpDoc(t, body)
	bar, secs := barHours(t, doc)
	// 0.03 for the run's 90 s; a slow machine may read a few seconds more.
	if secs < 90 || secs > 200 || bar < "0.03" || bar > "0.06" {
		t.Fatalf("GPU-hours bar %q (%d s), want 0.03 for a run of 90 s", bar, secs)
	}
	if held := text(doc, `[data-testid=held-hours]`); held != bar {
		t.Errorf("held %q beside the GPU-hours bar's %q before any minute is rolled up", held, bar)
	}
	if u := text(doc, `[data-testid=held-unknown]`); !strings.Contains(u, "not known yet") || doc.Find(`[data-testid=used-percent]`).Length() != 0 {
		t.Errorf("nothing measured yet: %q", strings.Join(strings.Fields(text(doc, `[data-testid=held-vs-used]`)), " "))
	}

	// The run's first whole minute, at 50%, rolled up.
	minute := now.Truncate(time.Minute).Add(-time.Minute)
	if err := p.srv.Store.SaveGPUMinutes(ctx, []models.GPUMinute{{GPUUUID: "GPU-H", Minute: minute.Unix(), Samples: 4, UtilSamples: 4,
		UtilSum: 200, WorkbenchID: wb.ID, GPUModel: "NVIDIA H100 80GB HBM3"}}); err != nil {
		t.Fatal(err)
	}
	_, body = p.get(c, "/usage")
	doc = mpDoc(t, body)
	bar, _ = barHours(t, doc)
	if held := text(doc, `[data-testid=held-hours]`); held != bar {
		t.Errorf("held %q beside the GPU-hours bar's %q, want the bar's (90 s and more, not the rolled-up minute's 0.02)", held, bar)
	}
	if m, u, pct := text(doc, `[data-testid=measured-hours]`), text(doc, `[data-testid=used-hours]`), text(doc, `[data-testid=used-percent]`); m != "0.02" || u != "0.01" || pct != "50%" {
		t.Errorf("measured %q used %q (%q), want the rolled-up minute: 0.02, 0.01, 50%%", m, u, pct)
	}
	if s := text(doc, `[data-testid=held-sources]`); !strings.Contains(s, "to the second") || !strings.Contains(s, "whole minutes") {
		t.Errorf("the page does not say why measured and held differ: %q", s)
	}
}

// A slice holder's held GPU-hours are its share of the GPU, from the
// telemetry (the ledger bills slice-hours): the GPU-hours bar, which
// counts whole GPUs only, reads 0.00, and the page says so beside them.
func TestUsageHeldSliceIsApartFromGPUHoursBar(t *testing.T) {
	skipNearMonthStart(t)
	p := newPortal(t)
	ctx := context.Background()
	now := time.Now().UTC()
	wb := heldFixture(t, p, now.Add(-3*time.Minute), models.UnitSlice)
	minute := now.Truncate(time.Minute).Add(-time.Minute)
	if err := p.srv.Store.SaveGPURollup(ctx, []models.GPUMinute{{GPUUUID: "GPU-S", Minute: minute.Unix(), Samples: 4, UnreadSamples: 4,
		GPUModel: "NVIDIA H100 80GB HBM3"}}, []models.GPUUnitMinute{{UnitUUID: "GPU-S", WorkbenchID: wb.ID, Minute: minute.Unix(), GPUUUID: "GPU-S",
		Kind: models.UnitSlice, GPUModel: "NVIDIA H100 80GB HBM3", Samples: 4, UtilSamples: 4, UtilSum: 400, MemSamples: 4, Units: 2, GPUUnits: 4}}); err != nil {
		t.Fatal(err)
	}
	c := p.client()
	p.login(c, "ada", "ada-password")
	_, body := p.get(c, "/usage")
	doc := mpDoc(t, body)
	bar, secs := barHours(t, doc)
	text := func(sel string) string { return strings.TrimSpace(doc.Find(sel).First().Text()) }
	if bar != "0.00" || secs != 0 {
		t.Errorf("GPU-hours bar %q (%d s) for a slice holder, want 0.00: the quota counts whole GPUs", bar, secs)
	}
	// Half a GPU for a minute: 30 GPU-seconds.
	if held, m := text(`[data-testid=held-hours]`), text(`[data-testid=measured-hours]`); held != "0.01" || m != "0.01" {
		t.Errorf("held %q measured %q, want the slice's half GPU-minute: 0.01", held, m)
	}
	if u := text(`[data-testid=held-units]`); !strings.Contains(u, "GPU-hours bar leaves them out") {
		t.Errorf("the unit note does not say the bar leaves the slices out: %q", u)
	}
}

// In a past month "held" is the month's statement (its whole-GPU lines),
// as its GPU-hours column totals them, not the rollup's minutes: two
// billed hours read 2.00 held, of which the telemetry measured half an
// hour.
func TestUsageHeldInPastMonthIsTheStatements(t *testing.T) {
	p := newPortal(t)
	ctx := context.Background()
	wb := heldFixture(t, p, time.Now().UTC(), models.UnitGPU)
	ada, _ := p.srv.Store.UserByUsername(ctx, "ada")
	last := models.MonthStart(time.Now()).AddDate(0, -1, 0)
	billLines(t, p, ada, wb.ID, "held-past", last.Add(24*time.Hour), 2)
	var rows []models.GPUMinute
	for i := range 30 {
		rows = append(rows, models.GPUMinute{GPUUUID: "GPU-P", Minute: last.Add(24*time.Hour + time.Duration(i)*time.Minute).Unix(), Samples: 4,
			UtilSamples: 4, UtilSum: 400, WorkbenchID: wb.ID, GPUModel: "NVIDIA H100 80GB HBM3"})
	}
	if err := p.srv.Store.SaveGPUMinutes(ctx, rows); err != nil {
		t.Fatal(err)
	}
	c := p.client()
	p.login(c, "ada", "ada-password")
	_, body := p.get(c, "/usage?month="+last.Format("2006-01"))
	doc := mpDoc(t, body)
	text := func(sel string) string { return strings.TrimSpace(doc.Find(sel).First().Text()) }
	if held, m, u := text(`[data-testid=held-hours]`), text(`[data-testid=measured-hours]`), text(`[data-testid=used-percent]`); held != "2.00" || m != "0.50" || u != "100%" {
		t.Errorf("last month: held %q measured %q used %q, want the statement's 2.00, the rollup's 0.50 at 100%%", held, m, u)
	}
}
