package templates_test

import (
	"strconv"
	"strings"
	"testing"

	"github.com/PuerkitoBio/goquery"

	"workbench/templates"
)

// chart is a 5-year chart: owning (200 000 up front, 4 209.40 a month) and
// three offers, the last an estimate.
func chart() templates.CostChartView {
	c := templates.CostChartView{Currency: "USD", HorizonText: "5 years (60 months)"}
	for m := 0; m <= 60; m++ {
		c.Months = append(c.Months, m)
	}
	line := func(label string, own, est bool, start, perMonth int64) templates.CostChartSeries {
		s := templates.CostChartSeries{Label: label, Own: own, Estimate: est}
		for _, m := range c.Months {
			s.Values = append(s.Values, start+perMonth*int64(m))
		}
		return s
	}
	c.Series = []templates.CostChartSeries{
		line("Owning", true, false, 200_000_000_000, 4_209_400_000),
		line("Lambda 8x H100 (on-demand)", false, false, 0, 11_650_800_000),
		line("Nebius H100 (on-demand)", false, false, 0, 11_242_000_000),
		line("RunPod H100 SXM community cloud (spot, estimate)", false, true, 0, 3_140_000_000),
	}
	return c
}

func floatAttr(t *testing.T, s *goquery.Selection, name string) float64 {
	t.Helper()
	v, ok := s.Attr(name)
	if !ok {
		t.Fatalf("no %s attribute", name)
	}
	f, err := strconv.ParseFloat(v, 64)
	if err != nil {
		t.Fatalf("%s=%q: %v", name, v, err)
	}
	return f
}

func TestCostChartSVG(t *testing.T) {
	doc := render(t, templates.CostChart(chart()))
	svg := doc.Find(`svg` + testid("tco-chart"))
	if svg.Length() != 1 {
		t.Fatalf("chart svg: %d", svg.Length())
	}
	if vb, _ := svg.Attr("viewBox"); !strings.HasPrefix(vb, "0 0 720 ") {
		t.Errorf("viewBox %q", vb)
	}
	if !strings.Contains(svg.AttrOr("aria-label", ""), "5 years") || svg.Find("title").Length() != 1 {
		t.Error("the chart has no accessible name")
	}

	// Axes: a horizontal x axis below a vertical y axis, meeting at the origin.
	x, y := svg.Find(testid("chart-x-axis")), svg.Find(testid("chart-y-axis"))
	if x.Length() != 1 || y.Length() != 1 {
		t.Fatalf("axes: x %d, y %d", x.Length(), y.Length())
	}
	if floatAttr(t, x, "y1") != floatAttr(t, x, "y2") || floatAttr(t, y, "x1") != floatAttr(t, y, "x2") {
		t.Error("the x axis is not horizontal or the y axis not vertical")
	}
	if floatAttr(t, x, "x1") != floatAttr(t, y, "x1") || floatAttr(t, x, "y1") != floatAttr(t, y, "y2") {
		t.Error("the axes do not meet at the origin")
	}
	// Ticks: years on x (0, 12, …, 60), round money on y from 0.
	var xt []string
	svg.Find(testid("chart-x-tick")).Each(func(_ int, s *goquery.Selection) { xt = append(xt, s.Text()) })
	if strings.Join(xt, ",") != "0,12,24,36,48,60" {
		t.Errorf("x ticks %v", xt)
	}
	yt := svg.Find(testid("chart-y-tick"))
	if yt.Length() != 6 || yt.First().Text() != "0" {
		t.Errorf("y ticks: %d, first %q", yt.Length(), yt.First().Text())
	}
	// The largest value (Lambda: 699 048 after 60 months) fits under the top tick.
	if top := yt.Last().Text(); top != "1M" && top != "800k" && top != "700k" {
		t.Errorf("top y tick %q", top)
	}
	if got := squash(svg.Find(testid("chart-x-title")).Text()); got != "Months" {
		t.Errorf("x title %q", got)
	}
	if got := squash(svg.Find(testid("chart-y-title")).Text()); got != "Cumulative cost (USD)" {
		t.Errorf("y title %q", got)
	}

	// One polyline per series, one point per month, inside the plot.
	series := svg.Find(`polyline` + testid("chart-series"))
	if series.Length() != 4 {
		t.Fatalf("series: %d, want owning + 3 offers", series.Length())
	}
	x0, x1 := floatAttr(t, x, "x1"), floatAttr(t, x, "x2")
	y0, y1 := floatAttr(t, y, "y1"), floatAttr(t, y, "y2")
	series.Each(func(i int, s *goquery.Selection) {
		pts := strings.Fields(s.AttrOr("points", ""))
		if len(pts) != 61 {
			t.Errorf("series %d: %d points", i, len(pts))
		}
		for _, p := range pts {
			xy := strings.Split(p, ",")
			px, _ := strconv.ParseFloat(xy[0], 64)
			py, _ := strconv.ParseFloat(xy[1], 64)
			if px < x0 || px > x1 || py < y0 || py > y1 {
				t.Errorf("series %d point %s outside the plot", i, p)
			}
		}
	})
	if l, _ := series.First().Attr("data-series"); l != "Owning" {
		t.Errorf("first series %q", l)
	}
	// Owning starts at the price, above the renting lines that start at 0.
	first := strings.Split(strings.Fields(series.First().AttrOr("points", ""))[0], ",")
	if py, _ := strconv.ParseFloat(first[1], 64); py >= y1 {
		t.Errorf("owning starts at y %v: the purchase price is not drawn", py)
	}
	if d := series.Last().AttrOr("stroke-dasharray", ""); d == "none" {
		t.Error("an estimated tier is drawn like a listed price")
	}

	// The legend names every series in order, with its line style.
	items := svg.Find(testid("chart-legend")).Find(testid("legend-item"))
	if items.Length() != 4 {
		t.Fatalf("legend items: %d", items.Length())
	}
	items.Each(func(i int, s *goquery.Selection) {
		want := series.Eq(i).AttrOr("data-series", "")
		if got := squash(s.Find("text").Text()); got != want {
			t.Errorf("legend %d %q, series %q", i, got, want)
		}
		if s.Find("line").AttrOr("stroke", "") != series.Eq(i).AttrOr("stroke", "x") {
			t.Errorf("legend %d colour differs from its line", i)
		}
	})
}

func TestCostChartDegenerate(t *testing.T) {
	// All zero, a single month: still axes, no NaN in coordinates.
	c := templates.CostChartView{Currency: "CNY", HorizonText: "1 month", Months: []int{0, 1},
		Series: []templates.CostChartSeries{{Label: "Owning", Own: true, Values: []int64{0, 0}}}}
	doc := render(t, templates.CostChart(c))
	html, _ := doc.Html()
	for _, bad := range []string{"NaN", "Inf"} {
		if strings.Contains(html, bad) {
			t.Errorf("chart contains %s", bad)
		}
	}
	if doc.Find(testid("chart-series")).Length() != 1 || doc.Find(testid("legend-item")).Length() != 1 {
		t.Error("one series, one legend item")
	}
}

func calcView() templates.CalculatorView {
	return templates.CalculatorView{Currency: "USD", IsAdmin: true, ShareURL: "/calculator?flavor=1x", CSVURL: "/calculator.csv?flavor=1x",
		Estimate: templates.EstimateForm{Flavor: "1x", Flavors: []templates.CalcOption{{Value: "1x", Label: "1x — 1 × H100"}},
			Duration: "daily", HoursPerDay: "8", Days: "22", Hidden: []templates.CalcHidden{{Name: "utilization", Value: "0.5"}}},
		Result: &templates.EstimateView{ShapeText: "1x: 1 × H100", DurationText: "8 h a day × 22 days = 176 hours",
			PerHour: "3.48 USD", PerDay: "83.52 USD", PerMonth: "2540.40 USD", Total: "612.48 USD", ComputeTotal: "612.48 USD",
			Lines: []templates.EstimateLine{{Resource: "GPU", Quantity: "1 × H100", Rate: "3.00 per GPU-hour", Total: "528.00 USD"}},
			Cloud: []templates.CloudRow{
				{Provider: "RunPod", Offer: "H100 SXM", Tier: "spot", Estimate: true, Rate: "1.08 USD/GPU-h", Cost: "189.41 USD", Vs: "223.4% more here", AsOf: "2025-09-25", Source: "RunPod pricing page"},
				{Provider: "AWS", Offer: "p5.48xlarge", Tier: "on-demand", Rate: "6.88 USD/GPU-h", Cost: "1210.88 USD", Vs: "saves 49.4% here", Saving: true, AsOf: "2026-09-10", Source: "AWS EC2"},
			},
			FXRates: []string{"1 CNY = 0.14 USD"}, LeftOut: []string{"5 offers in EUR are left out"}},
		TCO: templates.TCOForm{GPUModel: "H100", Fields: []templates.TCOField{{Name: "utilization", Label: "Expected utilisation", Value: "0", Hint: "typical 45–72%"}},
			Errors: templates.FormErrors{"utilization": "must be more than 0"}},
		TCOOut: &templates.TCOView{GPUModel: "H100", Utilization: "50%", OwnedPerGPUHour: "2.469 USD/GPU-h", Chart: chart(),
			Offers:        []templates.BreakEvenRow{{Label: "AWS p5 (on-demand)", BreakEven: "17.9%", Reachable: true, Months: "5.2 months"}},
			SuggestedRate: "1.7893 USD/GPU-h", Target: "70%", ApplyModel: "NVIDIA H100 80GB HBM3", ApplyQuery: "gpu_model=H100"},
	}
}

func TestCalculatorPage(t *testing.T) {
	doc := render(t, templates.CalculatorPage(adminPage("Calculator", "/calculator"), calcView()))
	if doc.Find(`link[href="/static/css/calculator.css"]`).Length() != 1 {
		t.Error("the calculator stylesheet is not linked")
	}
	if got := doc.Find(testid("estimate-total")).Text(); got != "612.48 USD" {
		t.Errorf("total %q", got)
	}
	rows := doc.Find(testid("cloud-row"))
	if rows.Length() != 2 || rows.First().Find(testid("estimate-badge")).Length() != 1 || rows.Eq(1).Find(testid("estimate-badge")).Length() != 0 {
		t.Errorf("cloud rows: %d, estimate badge only on the derived one", rows.Length())
	}
	if got := rows.Eq(1).Find(testid("cloud-as-of")).Text(); got != "2026-09-10" {
		t.Errorf("date %q", got)
	}
	if !rows.Eq(1).Find(testid("cloud-vs")).HasClass("vs-saving") || !rows.First().Find(testid("cloud-vs")).HasClass("vs-extra") {
		t.Error("saving / extra not marked")
	}
	if !strings.Contains(doc.Find(testid("fx-rates")).Text(), "1 CNY = 0.14 USD") {
		t.Error("exchange rate not shown")
	}
	// The other form's values travel as hidden inputs; the field error sits by its field.
	if doc.Find(testid("estimate-form")+` input[type=hidden][name=utilization][value="0.5"]`).Length() != 1 {
		t.Error("the TCO value is not carried by the estimate form")
	}
	if got := doc.Find(testid("tco-form") + " " + testid("error-utilization")).Text(); got != "must be more than 0" {
		t.Errorf("utilisation error %q", got)
	}
	if doc.Find(testid("tco-chart")).Length() != 1 || doc.Find(testid("break-even-utilization")).Text() != "17.9%" {
		t.Error("TCO result incomplete")
	}
	// Admins get the one-click apply; users do not.
	if doc.Find(testid("apply-rate-form")+` input[name=query][value="gpu_model=H100"]`).Length() != 1 {
		t.Error("no apply form for the admin")
	}
	v := calcView()
	v.IsAdmin = false
	if d := render(t, templates.CalculatorPage(userPage("Calculator", "/calculator"), v)); d.Find(testid("apply-rate-form")).Length() != 0 {
		t.Error("a user sees the apply form")
	}
}

func TestCloudPricesAdminPage(t *testing.T) {
	v := templates.CloudPricesView{Currency: "USD",
		Rows:      []templates.CloudPriceRow{{ID: 7, Provider: "AWS", Offer: "p5", GPUModel: "H100-80GB", GPUs: 8, Tier: "on-demand", Currency: "USD", Price: "6.88", AsOf: "2026-09-10", Source: "AWS"}},
		Discounts: []templates.CalcSetting{{Name: "discount_spot", Label: "spot discount (%)", Value: "60"}},
		FX:        []templates.CalcSetting{{Name: "fx_CNY", Label: "1 CNY in USD", Value: ""}},
		Errors:    templates.FormErrors{"fx_CNY": "must be a rate"}}
	doc := render(t, templates.CloudPricesPage(adminPage("Cloud prices", "/admin/cloud-prices"), v))
	row := doc.Find(testid("cloud-price-row"))
	if row.Length() != 1 || !strings.Contains(squash(row.Text()), "6.88 USD") || row.Find(`a[href="/admin/cloud-prices/7/edit"]`).Length() != 1 {
		t.Errorf("row: %q", squash(row.Text()))
	}
	if row.Find(`form[action="/admin/cloud-prices/7/delete"][data-confirm]`).Length() != 1 {
		t.Error("delete asks first")
	}
	if doc.Find(testid("error-fx_CNY")).Length() != 1 || doc.Find(`input[name=discount_spot][value="60"]`).Length() != 1 {
		t.Error("settings form")
	}
}

func TestChartAxisLabels(t *testing.T) {
	c := chart()
	doc := render(t, templates.CostChart(c))
	var labels []string
	doc.Find(testid("chart-y-tick")).Each(func(_ int, s *goquery.Selection) { labels = append(labels, s.Text()) })
	if strings.Join(labels, ",") != "0,200k,400k,600k,800k,1M" {
		t.Errorf("y tick labels %v", labels)
	}
}
