package templates_test

import (
	"bytes"
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"github.com/PuerkitoBio/goquery"
	"github.com/a-h/templ"

	"workbench/templates"
	"workbench/templates/i18n"
)

// The admin, calculator, catalog and GPU pages in Chinese: each page is
// rendered with a zh-CN context and its content (the <main> element) must
// carry Chinese text and none of the English labels these pages were
// converted from. Components of other areas that a page embeds (pager,
// month picker, quota bars, queue tables, image status, help texts) and
// code (image references, commands) are left out of the check.

// zhAreas are the catalog files of these pages.
var zhAreas = []string{"admin", "calculator", "catalog", "gpus"}

// notOurs selects what the check skips: other areas' components and code.
const notOurs = `code, pre, .quota-bar, [data-testid=month-picker], [data-testid=pager], [data-testid=queue-table], [data-testid=queue-empty],
	[data-testid=reservation-table], [data-testid=reservations-empty], [data-testid=image-presence], [data-testid=image-admin],
	[data-testid=start-command-help], label:has([data-testid=open-path]), label:has([data-testid=extra-ports]),
	[data-testid=image-form-test], [data-testid=gpu-model-select], [data-testid=shared-badge]`

// englishLabels are the English keys of these pages' catalogs whose
// Chinese differs, as patterns over a whole text node: "Billing · %s"
// matches "Billing · anything". Keys without an English word of three
// letters or more ("%d %s", "1 %s = %s %s") cannot be told from data and
// are left out.
func englishLabels(t *testing.T) []*regexp.Regexp {
	t.Helper()
	verb := regexp.MustCompile(`%(\[\d+\])?[-+# 0]*\d*(\.\d+)?[sdvqf%]`)
	word := regexp.MustCompile(`[A-Za-z]{3,}`)
	var out []*regexp.Regexp
	for _, area := range zhAreas {
		raw, err := os.ReadFile(filepath.Join("i18n", "locales", "zh-CN", area+".json"))
		if err != nil {
			t.Fatal(err)
		}
		var m map[string]string
		if err := json.Unmarshal(raw, &m); err != nil {
			t.Fatal(err)
		}
		for k, zh := range m {
			if zh == k {
				continue
			}
			// Markup keys (tMarkup) are split into text nodes around
			// their elements; the three-word check below covers them.
			plain := regexp.MustCompile(`<[^>]+>`).ReplaceAllString(k, "\x00")
			if !word.MatchString(verb.ReplaceAllString(plain, "")) || strings.Contains(plain, "\x00") {
				continue
			}
			parts := verb.Split(plain, -1)
			for i := range parts {
				parts[i] = regexp.QuoteMeta(parts[i])
			}
			out = append(out, regexp.MustCompile(`^`+strings.Join(parts, `.*?`)+`$`))
		}
	}
	if len(out) < 300 {
		t.Fatalf("only %d English labels found in the catalogs", len(out))
	}
	return out
}

// threeWords is a run of three English words: a sentence or label left in
// English, even one the catalog does not have.
var threeWords = regexp.MustCompile(`[A-Za-z]{2,}[ ,;:]+[A-Za-z]{2,}[ ,;:]+[A-Za-z]{2,}`)

var hanRe = regexp.MustCompile(`\p{Han}`)

func renderZh(t *testing.T, c templ.Component) *goquery.Document {
	t.Helper()
	var buf bytes.Buffer
	if err := c.Render(i18n.WithLocale(context.Background(), i18n.Chinese), &buf); err != nil {
		t.Fatalf("render: %v", err)
	}
	doc, err := goquery.NewDocumentFromReader(&buf)
	if err != nil {
		t.Fatal(err)
	}
	return doc
}

// assertChinese checks the content of a page rendered in Chinese: want
// (translations) appear, no text node or label attribute is an English
// label, and no text runs three English words.
func assertChinese(t *testing.T, root *goquery.Selection, labels []*regexp.Regexp, want ...string) {
	t.Helper()
	root.Find(notOurs).Remove()
	text := squash(root.Text())
	if !hanRe.MatchString(text) {
		t.Fatalf("no Chinese text: %q", text)
	}
	for _, w := range want {
		if !strings.Contains(text, w) {
			t.Errorf("missing %q in %q", w, text)
		}
	}
	check := func(where, s string) {
		s = strings.TrimSpace(s)
		if s == "" {
			return
		}
		for _, re := range labels {
			if re.MatchString(s) {
				t.Errorf("%s still English: %q (catalog key %s)", where, s, re)
				return
			}
		}
		if m := threeWords.FindString(s); m != "" {
			t.Errorf("%s has English words %q in %q", where, m, s)
		}
	}
	all := root.Find("*").AddSelection(root)
	all.Contents().Each(func(_ int, n *goquery.Selection) {
		if goquery.NodeName(n) == "#text" {
			check("text", n.Text())
		}
	})
	all.Each(func(_ int, e *goquery.Selection) {
		for _, a := range []string{"placeholder", "title", "aria-label", "data-confirm"} {
			if v, ok := e.Attr(a); ok {
				check(a, v)
			}
		}
	})
}

func zhMain(t *testing.T, c templ.Component) *goquery.Selection {
	t.Helper()
	m := renderZh(t, c).Find("main")
	if m.Length() != 1 {
		t.Fatalf("no <main>")
	}
	return m
}

func TestAdminPagesInChinese(t *testing.T) {
	labels := englishLabels(t)
	p := func(path string) templates.Page {
		return templates.Page{Title: "x", Path: path, PathMode: true,
			User: &templates.NavUser{Username: "root", Name: "根", IsAdmin: true}}
	}
	bar := templates.QuotaBar{Key: "gpus", Label: "使用中的 GPU", Used: "1", Limit: "2", Percent: 50, Level: "ok"}

	t.Run("billing", func(t *testing.T) {
		v := templates.BillingView{Currency: "USD", GroupBy: "user", GroupLabel: "用户",
			Month:     templates.MonthNav{Action: "/admin/billing", Value: "2026-01", Label: "January 2026", Current: true},
			Groupings: []templates.ChoiceLink{{Value: "user", Label: "用户", Href: "/admin/billing?group_by=user", Active: true}},
			Rows:      []templates.BillingRow{{Key: "ada", Label: "ada", GPUHours: "2.00", Amount: "7.00 USD", Share: "70%", KWh: "1.2", EnergyCost: "0.18 USD"}},
			Total:     "10.00 USD", TotalHours: "2.00", Pending: "1.00 USD", CSVURL: "/admin/billing.csv", EnergyPriced: true,
			Correction:  templates.CorrectionForm{Done: "补偿已写入账本。", Errors: templates.FormErrors{"user": "没有这个用户"}},
			Electricity: templates.ElectricityForm{Currency: "USD", Price: "0.15"}}
		assertChinese(t, zhMain(t, templates.AdminBillingPage(p("/admin/billing"), v)), labels,
			"账单 · 2026年1月", "导出 CSV", "另有 1.00 USD 正在运行中的工作台和主目录存储上累计", "电价（USD / kWh）", "给用户补偿", "冲正账本记录", "路径模式")
		v.Rows = nil
		assertChinese(t, zhMain(t, templates.AdminBillingPage(p("/admin/billing"), v)), labels, "2026年1月 没有任何费用。")
	})

	t.Run("egress", func(t *testing.T) {
		for _, v := range []templates.EgressView{
			{Mode: "internet", Enforced: true, Bridge: "br-wb", CheckedAt: "2026-01-02T03:04:05Z"},
			{Mode: "none", Pending: true},
			{Mode: "all", Problem: "iptables: 权限不足", Errors: templates.FormErrors{"allow": "无效"}},
		} {
			assertChinese(t, zhMain(t, templates.AdminEgressPage(p("/admin/egress"), v)), labels, "网络出站", "仅互联网（默认）", "全部禁止", "全部允许", "始终允许")
		}
	})

	t.Run("prices", func(t *testing.T) {
		row := templates.PriceRow{Resource: "gpu", GPUModel: "H100", Rate: "3.00 USD / GPU 小时", EffectiveFrom: "2026-01-01", IsDefault: true,
			Scheduled: true, InForce: true, Next: "首个价格，自 2026-02-01 起", CreatedBy: "root", CreatedAt: "2026-01-01"}
		mem := row
		mem.Resource, mem.GPUModel = "memory", ""
		v := templates.PricesView{Currency: "USD", Current: []templates.PriceRow{row, mem}, History: []templates.PriceRow{row},
			GPUModels: []string{"H100"}, Form: templates.PriceForm{Resource: "gpu"}, Now: "2026-01-02T00:00"}
		assertChinese(t, zhMain(t, templates.AdminPricesPage(p("/admin/prices"), v)), labels,
			"价格表", "当前生效", "默认值 — 请核对", "GPU（每 GPU 小时）", "存储（每 GiB 月）", "内存", "添加价格", "生效中", "已排期")
		v.Current = nil
		assertChinese(t, zhMain(t, templates.AdminPricesPage(p("/admin/prices"), v)), labels, "尚无价格")
		// The Price tiers section (issue 12 §3), with the preemptible rate beside a unit rate.
		row.Preemptible = "0.90 USD / GPU 小时"
		tier := templates.TierRow{Tier: "preemptible", DiscountPct: 70, EffectiveFrom: "2026-01-01", IsDefault: true, InForce: true,
			Next: "40%，自 2026-02-01 起", CreatedBy: "root", CreatedAt: "2026-01-01"}
		v.Current, v.Tiers, v.TierHistory, v.TierNames = []templates.PriceRow{row}, []templates.TierRow{tier}, []templates.TierRow{tier}, []string{"preemptible"}
		v.TierForm = templates.TierForm{Tier: "preemptible", DiscountPct: "150", Errors: templates.FormErrors{"discount_percent": "必须在 0 到 100 之间"}}
		assertChinese(t, zhMain(t, templates.AdminPricesPage(p("/admin/prices"), v)), labels,
			"计费档位", "减 70%", "设置折扣", "折扣历史", "可抢占：0.90 USD / GPU 小时", "折扣（费率减免的百分比）")
		v.Tiers = nil
		assertChinese(t, zhMain(t, templates.AdminPricesPage(p("/admin/prices"), v)), labels, "无折扣")
	})

	t.Run("quotas", func(t *testing.T) {
		v := templates.QuotaConsoleView{Currency: "USD", Rows: []templates.QuotaRow{
			{Scope: "default", Name: "default", Detail: "在用户组和用户都未设置时适用", Form: templates.QuotaForm{ID: "quota-default", Action: "/admin/quotas/default"}},
			{Scope: "user", Name: "ada", Detail: "用户组：ml", Disabled: true, Bars: []templates.QuotaBar{bar},
				Form: templates.QuotaForm{ID: "quota-user-2", Action: "/admin/quotas/users/ada", Inherited: map[string]string{"max_gpus": "继承：2"},
					Errors: templates.FormErrors{"budget": "数值过大"}}},
		}}
		assertChinese(t, zhMain(t, templates.AdminQuotasPage(p("/admin/quotas"), v)), labels,
			"配额", "同时使用的 GPU", "预算 / 月（USD）", "空闲超时 ≥（分钟）", "默认", "用户", "已停用")
	})

	t.Run("registries", func(t *testing.T) {
		v := templates.RegistriesView{Mirrors: "docker.io = registry.example.cn",
			Loaded: []templates.LoadedImage{{Ref: "fake:1"}, {Ref: "fake:2", InCatalog: "假镜像"}},
			Errors: templates.FormErrors{"archive": "请选择由 docker save 生成的文件"}}
		assertChinese(t, zhMain(t, templates.AdminRegistriesPage(p("/admin/registries"), v)), labels,
			"镜像仓库与离线镜像", "仓库镜像站", "从文件加载镜像", "已加载：", "加入目录", "——目录中的镜像：假镜像", "镜像仓库", "审计日志")
	})

	t.Run("users", func(t *testing.T) {
		v := templates.UsersView{Self: "root", Users: []templates.UserRow{
			{ID: 2, Username: "ada", DisplayName: "阿达", Email: "ada@example.com", Role: "user", SSO: true, Groups: []string{"ml"}, LoginFailures: 3},
			{ID: 3, Username: "bob", Role: "admin", Disabled: true, LoginFailures: 5, LoginLockedFor: "剩余 5 分钟"},
		}, Form: templates.NewUserForm{Errors: templates.FormErrors{"username": "已被占用"}}}
		assertChinese(t, zhMain(t, templates.AdminUsersPage(p("/admin/users"), v)), labels,
			"查找用户", "3 次密码错误", "登录已锁定（剩余 5 分钟）", "管理员", "解除登录锁定", "重置密码", "添加用户")
		g := templates.GroupsView{Groups: []templates.GroupRow{{ID: 1, Name: "ml", Description: "机器学习", Members: []string{"ada"}}},
			Usernames: []string{"ada"}, Errors: templates.FormErrors{"name": "已存在同名用户组"}}
		assertChinese(t, zhMain(t, templates.AdminGroupsPage(p("/admin/groups"), g)), labels, "用户组", "添加成员", "新建用户组", "移除")
		a := templates.AuditView{Rows: []templates.AuditRow{{At: "2026-01-01", Actor: "root", Action: "price.set", Target: "gpu|H100"}}}
		assertChinese(t, zhMain(t, templates.AdminAuditPage(p("/admin/audit"), a)), labels, "审计日志", "操作人", "筛选", "变更前")
	})

	t.Run("utilisation", func(t *testing.T) {
		row := templates.UtilRowView{Key: "ada", Label: "ada", Available: "10.0", Allocated: "5.0", AllocatedPct: "50%", Busy: "2.5", BusyPct: "50%",
			IdleHeld: "2.5", Unread: "0.0", UnheldCost: "15.00 USD", HeldIdleCost: "7.50 USD"}
		v := templates.UtilisationView{Bucket: "day", Buckets: []string{"day", "week", "month"}, From: "2026-01-01", To: "2026-01-08", Currency: "USD",
			CSVURL: "/admin/utilisation.csv", Total: row, ByBucket: []templates.UtilRowView{row}, ByUser: []templates.UtilRowView{row},
			Chart: templates.UtilChartView{Width: 600, Height: 200, X0: 40, X1: 590, Y0: 10, Y1: 170, YMax: "10.0",
				Bars: []templates.UtilBar{{X: 50, W: 20, Label: "01-01", ShowLabel: true,
					Segments: []templates.UtilSegment{{Y: 100, H: 50, Class: "busy", Title: "2026-01-01：2.5 GPU 小时 繁忙"}}}}}}
		assertChinese(t, zhMain(t, templates.AdminUtilisationPage(p("/admin/utilisation"), v)), labels,
			"利用率与空闲成本", "按天", "按 GPU 型号", "占用但空闲", "无人占用", "GPU 小时（占用时间的 50%）", "此时段内没有数据。")
		v.Chart.Empty = true
		assertChinese(t, zhMain(t, templates.AdminUtilisationPage(p("/admin/utilisation"), v)), labels, "此时段内没有 GPU 遥测数据。")
	})

	t.Run("image check", func(t *testing.T) {
		for _, state := range []string{"running", "passed", "failed"} {
			v := templates.ImageCheckView{ImageID: 1, ImageName: "pytorch", ImageRef: "quay.io/jupyter/pytorch-notebook", State: state,
				Message: "全部检查通过", Details: "log", StartedBy: "root", Started: "2026-01-01 10:00",
				Steps: []templates.CheckStepRow{{Name: "image", Label: "镜像已在本服务器上或可以拉取", State: "passed"}, {Name: "start", Label: "能从它启动容器（不带 GPU）", State: "pending"}}}
			assertChinese(t, zhMain(t, templates.ImageCheckPage(p("/admin/images/1/test/1"), v)), labels,
				"pytorch 的测试", "root 于 2026-01-01 10:00 发起", "重新测试", "编辑镜像", "等待中")
		}
	})
}

func TestCalculatorPagesInChinese(t *testing.T) {
	labels := englishLabels(t)
	p := templates.Page{Title: "x", Path: "/calculator", User: &templates.NavUser{Username: "root", IsAdmin: true}}
	chartZh := templates.CostChartView{Currency: "USD", HorizonText: "5 年（60 个月）", Months: []int{0, 30, 60},
		Series: []templates.CostChartSeries{{Label: "自购", Own: true, Values: []int64{1e11, 2e11, 3e11}},
			{Label: "AWS p5.48xlarge（按量计费）", Values: []int64{0, 2e11, 4e11}}}}
	v := templates.CalculatorView{Currency: "USD", IsAdmin: true, ShareURL: "/calculator?x", CSVURL: "/calculator.csv?x",
		Estimate: templates.EstimateForm{Flavor: "1x", Flavors: []templates.CalcOption{{Value: "1x", Label: "1x — 1 × H100，4 核，16 GiB"}},
			GPUModels: []string{"H100"}, Duration: "daily", HoursPerDay: "8", Days: "22"},
		Result: &templates.EstimateView{ShapeText: "1x：1 × H100", DurationText: "每天 8 小时 × 22 天 = 176 小时", MinChargeNote: "每次运行至少按 60 秒计费。",
			PerHour: "3.48 USD", PerDay: "83.52 USD", PerMonth: "2,540.40 USD", Total: "612.48 USD", ComputeTotal: "612.48 USD",
			Lines: []templates.EstimateLine{{Resource: "GPU", Quantity: "1 × H100", Rate: "每 GPU 小时 3.00", Total: "528.00 USD"}},
			Cloud: []templates.CloudRow{{Provider: "AWS", Offer: "p5.48xlarge", GPUModel: "H100", Tier: "按量计费", Rate: "6.88 USD/GPU-h",
				Price: "49.50 CNY", FX: "1 USD = 7.2 CNY（2026-09，默认值）", Cost: "1,210.88 USD", Vs: "本平台便宜 49.4%", Saving: true, AsOf: "2026-09-10", Source: "AWS"}},
			Estimates: []templates.CloudRow{{Provider: "AWS", Offer: "p5.48xlarge", Tier: "竞价", Estimate: true, Vs: "本平台贵 5%", AsOf: "—", Source: "AWS"}},
			FXRates:   []string{"1 USD = 7.2 CNY（2026-09）"}, LeftOut: []string{"3 个以 EUR 标价的报价未显示"}, Discounts: "云厂商未列出的计费方式按估算"},
		TCO: templates.TCOForm{GPUModel: "H100", GPUModels: []string{"H100"}, MoneyNote: "典型金额以美元计。", Detected: "本机检测到：8 × H100。",
			UseMeasured: true, MeasuredNote: "最近 30 天的实测值",
			Fields: []templates.TCOField{{Name: "utilization", Label: "预期利用率", Unit: "0–1 或 %", Value: "0.5", Hint: "实际使用的 GPU 小时占比"}}},
		TCOOut: &templates.TCOView{GPUModel: "H100", Utilization: "50%", OwnedPerGPUHour: "2.47 USD/GPU-h", AnnualCost: "86,000 USD", PeakKW: "10.20 kW",
			EnergyKWh: "60,000 kWh", Breakdown: []templates.CalcKV{{Label: "年折旧", Value: "50,000 USD"}}, RunningPerMonth: "3,000 USD",
			Table:     []templates.TCORow{{Utilization: "50%", EnergyKWh: "60,000 kWh", AnnualCost: "86,000 USD", PerGPUHour: "2.47", VsCheapest: "比 AWS 便宜 10%", Expected: true}},
			Offers:    []templates.BreakEvenRow{{Label: "AWS p5.48xlarge（按量计费）", BreakEven: "17.9%", Reachable: true, Months: "5.2 个月", AsOf: "2026-09-10", Source: "AWS"}},
			Estimates: []templates.BreakEvenRow{{Label: "AWS p5.48xlarge（竞价，估算）", Estimate: true, BreakEven: "120% （永不）", Months: "永不"}},
			Chart:     chartZh, Target: "70%", SuggestedRate: "1.79 USD/GPU-h", CurrentRate: "3.00 USD/GPU-h", ApplyModel: "H100", ApplyQuery: "gpu_model=H100"},
	}
	t.Run("calculator", func(t *testing.T) {
		main := zhMain(t, templates.CalculatorPage(p, v))
		if title := main.Find(`[data-testid=tco-chart] > title`).Text(); title != "5 年（60 个月） 内自购与租用的累计成本" {
			t.Errorf("chart title %q", title)
		}
		if y := main.Find(`[data-testid=chart-y-title]`).Text(); y != "累计成本（USD）" {
			t.Errorf("chart y title %q", y)
		}
		assertChinese(t, main, labels, "计算器", "本平台费用", "自定义配置", "每天小时数 × 天数", "同样的 GPU 在云上", "1 个估算的竞价与预留档位",
			"汇率：1 USD = 7.2 CNY（2026-09）。", "自购与租用对比", "盈亏平衡", "月数", "建议内部价格", "将 1.79 USD/GPU-h 应用于 H100", "（价格表目前对 H100 收取 3.00 USD/GPU-h）")
	})
	t.Run("cloud prices", func(t *testing.T) {
		cv := templates.CloudPricesView{Currency: "USD",
			Rows: []templates.CloudPriceRow{{ID: 1, Provider: "AWS", Offer: "p5.48xlarge", GPUModel: "H100", GPUs: 8, Tier: "reserved-1y", Currency: "USD",
				Price: "3.93", AsOf: "2026-09-10", Source: "AWS"}},
			Discounts: []templates.CalcSetting{{Name: "discount_spot", Label: "竞价折扣（%）", Hint: "默认 60%"}},
			FX:        []templates.CalcSetting{{Name: "fx_CNY", Label: "1 CNY 折合 USD", Hint: "1 CNY 值多少 USD"}, {Name: "fx_asof_CNY", Label: "CNY 汇率日期", Text: true}},
			Errors:    templates.FormErrors{"_": "无效"}}
		assertChinese(t, zhMain(t, templates.CloudPricesPage(p, cv)), labels, "云价格", "估算与币种", "1 年预留", "添加价格", "编辑", "删除")
		cv.Rows = nil
		assertChinese(t, zhMain(t, templates.CloudPricesPage(p, cv)), labels, "价格目录为空")
		f := templates.CloudPriceForm{Tier: "spot", Tiers: []string{"on-demand", "spot", "reserved-1y", "reserved-3y"}, Currency: "USD"}
		assertChinese(t, zhMain(t, templates.CloudPriceFormPage(p, f)), labels, "添加云价格", "按量计费", "竞价", "3 年预留", "价格日期", "取消")
	})
}

func TestCatalogAndGPUPagesInChinese(t *testing.T) {
	labels := englishLabels(t)
	p := func(path string) templates.Page {
		return templates.Page{Title: "x", Path: path, User: &templates.NavUser{Username: "root", IsAdmin: true}}
	}
	t.Run("catalog", func(t *testing.T) {
		v := templates.CatalogView{IsAdmin: true, Images: []templates.ImageCard{
			{ID: 1, Name: "PyTorch", Image: "quay.io/jupyter/pytorch-notebook", Description: "深度学习", Tags: []string{"CUDA 12"}, Saved: true, Size: "1 GB"},
			{ID: 2, Name: "R", Image: "r-notebook"},
		}, Flavors: []templates.FlavorRow{
			{ID: 1, Name: "cpu-4", CPUCores: 4, MemoryGiB: "16", ShmMiB: 1024, Enabled: true},
			{ID: 2, Name: "1x-h100", GPUModel: "H100", GPUCount: 1, CPUCores: 8, MemoryGiB: "64", ShmMiB: 8192, FreeGPUs: 1, FreeNoun: "GPUs", UnitText: "1 × H100"},
			{ID: 3, Name: "mig-1g", GPUModel: "H100", GPUCount: 1, CPUCores: 2, MemoryGiB: "8", FreeGPUs: 3, FreeNoun: "MIG instances", UnitText: "1 × MIG 1g.10gb (H100)", Shared: false},
		}}
		assertChinese(t, zhMain(t, templates.CatalogPage(p("/catalog"), v)), labels,
			"目录", "我的镜像", "新建镜像", "保存的镜像", "提升到目录", "规格", "共享内存", "已停用", "1 块 GPU", "3 个 MIG 实例")
		img := templates.ImageForm{ID: 1, Name: "PyTorch", Errors: templates.FormErrors{"_": "已存在同名镜像"}}
		assertChinese(t, zhMain(t, templates.ImageFormPage(p("/admin/images/1/edit"), img)), labels, "编辑镜像", "镜像引用", "启动命令", "不经 shell 运行")
		fl := templates.FlavorForm{Name: "1x", UnitKind: "mig", TwinChoices: []templates.TwinChoice{{ID: "1", Name: "cpu-4"}}, Errors: templates.FormErrors{"name": "已存在同名规格"}}
		assertChinese(t, zhMain(t, templates.FlavorFormPage(p("/admin/flavors/new"), fl)), labels, "新建规格", "GPU 单元", "某一配置的 MIG 实例", "纯 CPU 替身", "GPU 空闲多久后停止")
	})
	t.Run("gpus", func(t *testing.T) {
		v := templates.GPUsView{Status: "NVML，2 块 GPU", Simulated: true, CanDrain: true,
			Summary: []templates.GPUModelSummary{{Model: "NVIDIA H100 80GB HBM3", Short: "H100", Total: 2, Free: 1, PerGPUh: "3.00 USD/GPU 小时", LaunchURL: "/workbenches/new?flavor=1x"}},
			GPUs: []templates.GPURow{
				{Index: 0, UUID: "GPU-0", Name: "GPU 0 · H100", State: "free", StateLabel: "空闲", HasUtil: true, HasMem: true, HasTemp: true, HasPower: true, UtilPercent: 12, MemoryMiB: 81920, MemUsedMiB: 1024, TempC: 40, PowerW: 100},
				{Index: 1, UUID: "GPU-1", Name: "GPU 1 · H100", State: "shared", StateLabel: "共享：4 个切片中 3 个空闲", SharedSlices: 4, SharedLabel: "共享 — 无显存隔离", Drained: true,
					Units: []templates.GPUUnitRow{{Kind: "slice", Label: "切片 0", Free: true}, {Kind: "slice", Label: "切片 1", HeldBy: "你的工作台 wb", Reading: "已用 1.0 / 10.0 GiB · 无法按实例读取利用率"}}},
			}}
		assertChinese(t, zhMain(t, templates.GPUsPage(p("/gpus"), v)), labels,
			"模拟", "GPU 空出时通知我", "1 / 2 空闲", "启动", "利用率", "无法读取", "恢复调度", "停止调度", "共享…", "切片数（0 = 不共享）", "队列", "预约")
		v.GPUs = nil
		assertChinese(t, zhMain(t, templates.GPUsPage(p("/gpus"), v)), labels, "资源池中没有 GPU")
	})
	// The catalog's "Free now" with booked units counted apart: every
	// booking on an administrator's, others' on a user's.
	t.Run("catalog booked", func(t *testing.T) {
		fl := []templates.FlavorRow{{ID: 2, Name: "1x-h100", GPUModel: "H100", GPUCount: 1, CPUCores: 8, MemoryGiB: "64", FreeGPUs: 1, BookedByOthers: 2, FreeNoun: "GPUs", UnitText: "1 × H100"}}
		assertChinese(t, zhMain(t, templates.CatalogPage(p("/catalog"), templates.CatalogView{IsAdmin: true, AllBookings: true, Flavors: fl})), labels,
			"1 块 GPU · 另有 2 个此刻已被预订")
		assertChinese(t, zhMain(t, templates.CatalogPage(p("/catalog"), templates.CatalogView{Flavors: fl})), labels,
			"1 块 GPU · 另有 2 个此刻为他人预留")
	})
	// Units others' bookings hold back, counted apart, and the booking
	// form's word on a group's booking.
	t.Run("gpus reserved for others", func(t *testing.T) {
		v := templates.GPUsView{Status: "NVML，2 块 GPU",
			Summary: []templates.GPUModelSummary{{Model: "NVIDIA H100 80GB HBM3", Short: "H100", Total: 2, Free: 0, Booked: 1,
				Units: []templates.UnitSummary{{Kind: "mig", Profile: "1g.10gb", Label: "MIG 1g.10gb", Total: 7, Free: 5, Booked: 2}, {Kind: "slice", Label: "共享切片", Total: 4, Free: 4}}}},
			Booking: templates.ReservationsView{Form: templates.BookingForm{Pools: []templates.PoolOption{{Value: "gpu|H100|", Label: "H100"}}, Groups: []string{"lab"}}}}
		assertChinese(t, zhMain(t, templates.GPUsPage(p("/gpus"), v)), labels,
			"0 / 2 空闲 · 另有 1 块此刻为他人预留", "MIG 1g.10gb：5 / 7 空闲 · 另有 2 个此刻为他人预留", "共享切片：4 / 4 空闲", "组的预订只保留空闲的单元")
	})
}

// Every Chinese text of these catalogs takes the arguments its English key
// takes: formatted with them, neither prints a "%!" complaint (a missing,
// extra or mistyped argument), and the Chinese one uses each argument.
func TestAdminCatalogFormatsMatch(t *testing.T) {
	verb := regexp.MustCompile(`%%|%(?:\[(\d+)\])?[-+# 0]*\d*(?:\.\d+)?([a-z])`)
	zh := i18n.WithLocale(context.Background(), i18n.Chinese)
	for _, area := range zhAreas {
		raw, err := os.ReadFile(filepath.Join("i18n", "locales", "zh-CN", area+".json"))
		if err != nil {
			t.Fatal(err)
		}
		var m map[string]string
		if err := json.Unmarshal(raw, &m); err != nil {
			t.Fatal(err)
		}
		for key := range m {
			var args []any
			next := 0
			for _, v := range verb.FindAllStringSubmatch(key, -1) {
				if v[0] == "%%" {
					continue
				}
				i := next
				if v[1] != "" {
					i = int(v[1][0]-'0') - 1
				}
				next = i + 1
				for len(args) <= i {
					args = append(args, nil)
				}
				if v[2] == "d" {
					args[i] = 7 + i
				} else {
					args[i] = "ARG" + string(rune('A'+i))
				}
			}
			en, cn := i18n.T(context.Background(), key, args...), i18n.T(zh, key, args...)
			if strings.Contains(en, "%!") || strings.Contains(cn, "%!") {
				t.Errorf("%s: %q formats as %q / %q", area, key, en, cn)
			}
			for i, a := range args {
				if s, ok := a.(string); ok && !strings.Contains(cn, s) {
					t.Errorf("%s: %q: the Chinese %q drops argument %d", area, key, cn, i+1)
				}
			}
		}
	}
}
