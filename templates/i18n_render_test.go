package templates_test

import (
	"bytes"
	"context"
	"strings"
	"testing"
	"time"

	"github.com/PuerkitoBio/goquery"
	"github.com/a-h/templ"

	"workbench/templates"
	"workbench/templates/i18n"
)

func renderIn(t *testing.T, ctx context.Context, c templ.Component) (*goquery.Document, string) {
	t.Helper()
	var buf bytes.Buffer
	if err := c.Render(ctx, &buf); err != nil {
		t.Fatalf("render: %v", err)
	}
	html := buf.String()
	doc, err := goquery.NewDocumentFromReader(strings.NewReader(html))
	if err != nil {
		t.Fatalf("parse: %v", err)
	}
	return doc, html
}

func zhPage(title, path string) templates.Page {
	return templates.Page{Title: title, Path: path, Here: path, Version: "test",
		User: &templates.NavUser{Username: "lin", Name: "Lin"}}
}

// The home page of a Chinese reader: Chinese navigation and headings, the
// state in Chinese, money as ¥ with thousands separators, <html lang>.
func TestHomePageInChinese(t *testing.T) {
	zh := i18n.WithLocale(context.Background(), i18n.Chinese)
	row := templates.WorkbenchRow{ID: "k3x9", Name: "bert", State: "running", Image: "pytorch", Flavor: "h100-1",
		Currency: "CNY", CostMicros: 1234567_890000, RateMicros: 3_250000, Cost: "1234567.89", Rate: "3.25 CNY/h"}
	doc, html := renderIn(t, zh, templates.HomePage(zhPage("工作台", "/"), templates.HomeView{Workbenches: []templates.WorkbenchRow{row}}))
	if lang, _ := doc.Find("html").Attr("lang"); lang != "zh-CN" {
		t.Errorf(`<html lang=%q>, want "zh-CN"`, lang)
	}
	if got := squash(doc.Find(testid("wb-cost")).Text()); !strings.Contains(got, "¥1,234,567.89") || !strings.Contains(got, "¥3.25/小时") {
		t.Errorf("cost cell %q, want ¥1,234,567.89 and ¥3.25/小时", got)
	}
	if got := doc.Find(testid("wb-state")).Text(); got != "运行中" {
		t.Errorf("state badge %q, want 运行中", got)
	}
	for _, want := range []string{"新建工作台", "工作台", "用量", "退出登录"} {
		if !strings.Contains(html, want) {
			t.Errorf("Chinese home page lacks %q", want)
		}
	}
	for _, english := range []string{"New workbench", "Log out", "Usage<"} {
		if strings.Contains(html, english) {
			t.Errorf("Chinese home page still says %q", english)
		}
	}
	// The switch offers English, named in English, and marks Chinese.
	if doc.Find(`[data-testid="lang-en"]`).Text() != "English" || doc.Find(`[data-testid="lang-zh-CN"]`).AttrOr("aria-pressed", "") != "true" {
		t.Errorf("language switch: %s", squash(doc.Find(testid("lang-switch")).Text()))
	}
}

// The same page in English is as it always was: "12.35 USD", "running".
func TestHomePageInEnglishUnchanged(t *testing.T) {
	row := templates.WorkbenchRow{ID: "k3x9", Name: "bert", State: "running", Currency: "USD", CostMicros: 12_350000, RateMicros: 3_250000}
	doc, _ := renderIn(t, context.Background(), templates.HomePage(zhPage("Workbenches", "/"), templates.HomeView{Workbenches: []templates.WorkbenchRow{row}}))
	if lang, _ := doc.Find("html").Attr("lang"); lang != "en" {
		t.Errorf(`<html lang=%q>, want "en"`, lang)
	}
	if got := squash(doc.Find(testid("wb-cost")).Text()); got != "12.35 USD 3.25 USD/h" {
		t.Errorf("cost cell %q", got)
	}
	if got := doc.Find(testid("wb-state")).Text(); got != "running" {
		t.Errorf("state badge %q", got)
	}
}

func TestMoneyAndDatesPerLocale(t *testing.T) {
	en := context.Background()
	zh := i18n.WithLocale(en, i18n.Chinese)
	for _, c := range []struct {
		ctx      context.Context
		micros   int64
		currency string
		want     string
	}{
		{en, 1234_570000, "USD", "1234.57 USD"},
		{zh, 1234_570000, "CNY", "¥1,234.57"},
		{zh, 1234_570000, "USD", "$1,234.57"},
		{zh, -999_500000, "CNY", "-¥999.50"},
		{zh, 1_000_000_000000, "EUR", "1,000,000.00 EUR"},
		// Not zero, but under what the currency writes: not "0.00".
		{zh, 5, "CNY", "< ¥0.01"},
		{en, 4999, "USD", "< 0.01 USD"},
		{en, 5000, "USD", "0.01 USD"},
		{en, -4999, "USD", "> -0.01 USD"},
		{en, 499_999, "JPY", "< 1 JPY"},
		{en, 0, "USD", "0.00 USD"},
		{zh, 12345_000000, "JPY", "12,345 JPY"},
	} {
		if got := templates.Money(c.ctx, c.micros, c.currency); got != c.want {
			t.Errorf("Money(%s, %d, %s) = %q, want %q", i18n.FromContext(c.ctx).Lang(), c.micros, c.currency, got, c.want)
		}
	}
	at := time.Date(2026, 3, 4, 14, 5, 0, 0, time.UTC)
	if got := templates.WhenIn(zh, &at); got != "2026年3月4日 14:05 UTC" {
		t.Errorf("zh date %q", got)
	}
	if got := templates.WhenIn(en, &at); got != "2026-03-04 14:05 UTC" {
		t.Errorf("en date %q", got)
	}
}

// The workbench page gives its script the state names in the reader's
// language (the script keeps no words of its own), and its money in ¥.
func TestWorkbenchPageInChinese(t *testing.T) {
	zh := i18n.WithLocale(context.Background(), i18n.Chinese)
	wb := templates.WorkbenchRow{ID: "k3x9", Name: "bert", State: "starting", Progress: 40, Currency: "CNY", CostMicros: 12_500000, RateMicros: 3_250000}
	doc, html := renderIn(t, zh, templates.WorkbenchPage(zhPage("bert", "/workbenches/k3x9"), templates.WorkbenchView{WB: wb}))
	labels := doc.Find(`[data-events]`).AttrOr("data-state-labels", "")
	for _, want := range []string{`"running":"运行中"`, `"queued":"排队中"`, `"stopped":"已停止"`} {
		if !strings.Contains(labels, want) {
			t.Errorf("data-state-labels %s lacks %s", labels, want)
		}
	}
	if got := doc.Find(testid("wb-cost")).Text(); got != "¥12.50" {
		t.Errorf("cost %q, want ¥12.50", got)
	}
	if !strings.Contains(html, "启动中") || !strings.Contains(html, "累计费用") {
		t.Errorf("workbench page is not Chinese")
	}
}

// Brackets around a unit are full-width on a Chinese page, as the rest of
// its brackets are ("能耗 (kWh)" beside "内存（GiB）" read as a typo), and
// half-width in English.
func TestUnitBracketsInTheReadersScript(t *testing.T) {
	zh := i18n.WithLocale(context.Background(), i18n.Chinese)
	v := templates.UsageView{Currency: "CNY", Month: templates.MonthNav{Action: "/usage", Value: "2026-01", Label: "2026年1月", Current: true}}
	doc, _ := renderIn(t, zh, templates.UsagePage(zhPage("用量", "/usage"), v))
	if got := doc.Find(testid("statement-summary") + " th").Eq(3).Text(); got != "能耗（kWh）" {
		t.Errorf("zh energy heading %q", got)
	}
	doc, _ = renderIn(t, context.Background(), templates.UsagePage(zhPage("Usage", "/usage"), v))
	if got := doc.Find(testid("statement-summary") + " th").Eq(3).Text(); got != "Energy (kWh)" {
		t.Errorf("en energy heading %q", got)
	}
}

// The seeded priority classes read in Chinese with the name the API takes
// beside it; an admin's own class keeps its name; English is the name.
func TestSeededClassNamesInChinese(t *testing.T) {
	zh := i18n.WithLocale(context.Background(), i18n.Chinese)
	for name, want := range map[string]string{"interactive": "交互式（interactive）", "batch": "批处理（batch）", "urgent": "urgent"} {
		if got := templates.ClassName(zh, name); got != want {
			t.Errorf("zh %s: %q, want %q", name, got, want)
		}
	}
	if got := templates.ClassName(context.Background(), "batch"); got != "batch" {
		t.Errorf("en batch: %q", got)
	}
}
