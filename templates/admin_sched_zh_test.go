package templates_test

import (
	"encoding/json"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"workbench/templates"
)

// schedLabels are the English keys of admin_sched.json (the admin queue's
// Move, the reservations and what-if pages) as whole-text patterns, like
// englishLabels does for the other admin areas.
func schedLabels(t *testing.T) []*regexp.Regexp {
	t.Helper()
	raw, err := os.ReadFile(filepath.Join("i18n", "locales", "zh-CN", "admin_sched.json"))
	if err != nil {
		t.Fatal(err)
	}
	var m map[string]string
	if err := json.Unmarshal(raw, &m); err != nil {
		t.Fatal(err)
	}
	verb := regexp.MustCompile(`%(\[\d+\])?[-+# 0]*\d*(\.\d+)?[sdvqf%]`)
	word := regexp.MustCompile(`[A-Za-z]{3,}`)
	var out []*regexp.Regexp
	for k, zh := range m {
		if zh == k || !word.MatchString(verb.ReplaceAllString(k, "")) {
			continue
		}
		parts := verb.Split(k, -1)
		for i := range parts {
			parts[i] = regexp.QuoteMeta(parts[i])
		}
		out = append(out, regexp.MustCompile(`^`+strings.Join(parts, `.*?`)+`$`))
	}
	return append(out, englishLabels(t)...)
}

// The reservations and what-if admin pages, and the queue's Move, in
// Chinese: every label, help text and message of the page is translated
// (the simulator's SVG chart is its own English output and left out).
func TestAdminSchedPagesInChinese(t *testing.T) {
	labels := schedLabels(t)
	p := func(path string) templates.Page {
		return templates.Page{Title: "x", Path: path, User: &templates.NavUser{Username: "root", IsAdmin: true}}
	}
	t.Run("reservations", func(t *testing.T) {
		v := templates.AdminReservationsView{BillUnused: true, Currency: "USD", Period: "2026-01-01 00:00 – 2026-01-31 00:00 UTC",
			Caps: []templates.ReservationCapRow{{Scope: "default", Name: "-", Hours: "40", UpdatedBy: "root", UpdatedAt: "2026-01-02 03:04"},
				{Scope: "user", Name: "ada", Hours: "12", UpdatedBy: "root", UpdatedAt: "2026-01-02 03:04"}},
			CapForm: templates.ReservationCapForm{Scope: "group", Name: "lab", Hours: "x"}, CapErrors: templates.FormErrors{"unit_hours_per_week": "请填写整数"},
			Report:  []templates.ReservedUnusedRow{{User: "ada", Reservations: 2, Reserved: "4.00", Used: "1.50", Unused: "2.50", BilledMicros: 7_500_000, Unsettled: 1}},
			CSVHref: "/admin/reservations/unused.csv?from=x"}
		assertChinese(t, zhMain(t, templates.AdminReservationsPage(p("/admin/reservations"), v)), labels,
			"预约时间的计费", "每周预约上限", "所有人（默认）", "已预约但未使用", "未使用的时间计费。", "下载 CSV")
		v.Report, v.Caps, v.BillUnused = nil, nil, false
		assertChinese(t, zhMain(t, templates.AdminReservationsPage(p("/admin/reservations"), v)), labels,
			"没有上限：预约仅受配额限制。", "此时段内没有预约。", "未使用的时间不计费。")
	})
	t.Run("simulate", func(t *testing.T) {
		v := templates.AdminSimulateView{Profiles: []string{"1g.10gb", "3g.40gb"}, Classes: []string{"interactive", "batch"},
			Policies: []templates.SimulatePolicy{{Name: "queue-fair", Checked: true}, {Name: "fair+preempt+sharing"}},
			Form:     templates.SimulateForm{Days: "30", MIGGPUs: "2", MIGProfile: "3g.40gb"}, Errors: templates.FormErrors{"gpus": "错误"}, Ran: true,
			Result: templates.SimulateResult{Model: "NVIDIA H100", GPUs: 8, SharedGPUs: 1, Slices: 4, MIG: "0:3g.40gb", Days: 30, Engine: "portal", Jobs: 3,
				Users: []string{"ada"}, Currency: "USD", SVG: `<svg><text>GPU utilisation by policy</text></svg>`,
				Rows: []templates.SimulateRow{{Policy: "queue-fair", Utilisation: "12.5", Served: "10.0", BusyHours: "6.0", AvailableHours: "48.0",
					LostHours: "0.0", Waits: []string{"0 / 0", "1 / 2"}, Costs: []int64{15_000_000}}}}}
		main := zhMain(t, templates.AdminSimulatePage(p("/admin/simulate"), v))
		if main.Find(`[data-testid=simulate-chart] svg`).Length() != 1 {
			t.Fatal("no chart")
		}
		main.Find(".sim-chart").Remove()
		assertChinese(t, main, labels, "假设分析：重放账本", "要比较的策略", "运行模拟", "结果", "MIG：0:3g.40gb。", "每位用户的费用（统一价格）", "interactive 等待 p50 / p95",
			"门户的调度器：优先级、公平份额和回填；不抢占", "同 queue-fair，且可抢占的运行会让出 GPU；部分 GPU 切片共享")
	})
	t.Run("queue move", func(t *testing.T) {
		v := templates.AdminQueueView{Rows: []templates.QueueRow{{ID: "w1", Name: "ada-1", Owner: "ada", Flavor: "1x H100", Priority: "batch", Position: 2, Mine: true}}}
		root := zhMain(t, templates.AdminQueuePage(p("/admin/queue"), v))
		if got := strings.TrimSpace(root.Find(`[data-testid=queue-move]`).Text()); got != "移动" {
			t.Errorf("Move button %q", got)
		}
		if got := root.Find(`[data-testid=queue-move-position]`).AttrOr("aria-label", ""); got != "ada-1 在其队列中的新位置" {
			t.Errorf("position label %q", got)
		}
	})
}
