package handlers

import (
	"context"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"workbench/models"
	"workbench/orchestrator"
	"workbench/templates"
	"workbench/templates/i18n"
)

// The wording handlers build for pages follows the reader's language, and
// English is as it was.
func TestHandlerTextsPerLocale(t *testing.T) {
	en := context.Background()
	zh := i18n.WithLocale(en, i18n.Chinese)
	for _, c := range []struct{ got, want string }{
		{minutesText(en, 185*time.Minute), "3 h 5 min"},
		{minutesText(zh, 185*time.Minute), "3 小时 5 分钟"},
		{minutesText(zh, 20*time.Second), "不到 1 分钟"},
		{durationText(zh, 4*time.Hour), "4 小时"},
		{waitTextIn(zh, 30), "30 秒"},
		{waitText(600), "10 minutes"},
		{fieldMessage(zh, "you already have a workbench with this name"), "你已有同名的工作台"},
		{fieldMessage(en, "you already have a workbench with this name"), "you already have a workbench with this name"},
		{fieldMessage(zh, "some other 100% message"), "some other 100% message"},
	} {
		if c.got != c.want {
			t.Errorf("got %q, want %q", c.got, c.want)
		}
	}
	now := time.Date(2026, 3, 3, 9, 0, 0, 0, time.UTC)
	if got := clockText(zh, now.Add(48*time.Hour+70*time.Minute), now); got != "2026年3月5日 10:10 UTC" {
		t.Errorf("zh clock %q", got)
	}
	if got := clockText(en, now.Add(48*time.Hour+70*time.Minute), now); got != "2026-03-05 10:10 UTC" {
		t.Errorf("en clock %q", got)
	}
	// A reader with a zone reads today's deadline in it too.
	shanghai, err := time.LoadLocation("Asia/Shanghai")
	if err != nil {
		t.Fatal(err)
	}
	if got := clockText(templates.WithTimeZone(en, shanghai), now.Add(70*time.Minute), now); got != "10:10 UTC (18:10 UTC+8)" {
		t.Errorf("en clock in Shanghai %q", got)
	}
	d := orchestrator.Deadlines{IdleFor: 42 * time.Minute, IdleStopAt: now.Add(18 * time.Minute),
		RuntimeLimit: 4 * time.Hour, RuntimeWhose: "your quota's", RuntimeStopAt: now.Add(2 * time.Hour)}
	v := deadlineText(zh, "x", d, now, "")
	if v.Idle != "已空闲 42 分钟——若不使用，将于 09:18 UTC 停止" || v.Runtime != "最长运行时间（配额规定的 4 小时）于 11:00 UTC 结束" {
		t.Errorf("zh deadlines %q / %q", v.Idle, v.Runtime)
	}
	if v := deadlineText(en, "x", d, now, ""); v.Runtime != "maximum runtime (your quota's 4 h) ends at 11:00 UTC" {
		t.Errorf("en runtime %q", v.Runtime)
	}
	// An admin reading alice's workbench: her quota, not "your".
	if v := deadlineText(en, "x", d, now, "alice"); v.Runtime != "maximum runtime (alice's quota's 4 h) ends at 11:00 UTC" {
		t.Errorf("en runtime for an admin %q", v.Runtime)
	}
	if v := deadlineText(zh, "x", d, now, "alice"); v.Runtime != "最长运行时间（alice 的配额规定的 4 小时）于 11:00 UTC 结束" {
		t.Errorf("zh runtime for an admin %q", v.Runtime)
	}
	// The monthly limit's stop, beside the others; within 15 minutes it is
	// a warning.
	b := orchestrator.Deadlines{BudgetStopAt: now.Add(10 * time.Minute)}
	if v := deadlineText(en, "x", b, now, ""); v.Budget != "your monthly limit is reached at 09:10 UTC: it stops then" || !v.Soon || !v.Any() {
		t.Errorf("en budget deadline %q (soon %v)", v.Budget, v.Soon)
	}
	if v := deadlineText(zh, "x", b, now, "alice"); v.Budget != "alice 的每月限额将于 09:10 UTC 用完，届时它会停止" {
		t.Errorf("zh budget deadline for an admin %q", v.Budget)
	}
	// A 2 h flavor extended three times says so (it read "the flavor's 5 h").
	ext := orchestrator.ComputeDeadlines(&models.Workbench{StartedAt: &now}, orchestrator.RuntimeRule{Flavor: 2 * time.Hour, Extension: 3 * time.Hour}, now, now)
	if v := deadlineText(en, "x", ext, now, ""); v.Runtime != "maximum runtime (the flavor's 2 h, extended by 3 h) ends at 14:00 UTC" {
		t.Errorf("en extended runtime %q", v.Runtime)
	}
	if v := deadlineText(zh, "x", ext, now, ""); !strings.Contains(v.Runtime, "已延长 3 小时") {
		t.Errorf("zh extended runtime %q", v.Runtime)
	}
	// At the quota's ceiling: why there is no "+1 h", in the reader's
	// language (it stayed English).
	ceil := orchestrator.ComputeDeadlines(&models.Workbench{StartedAt: &now}, orchestrator.RuntimeRule{Quota: 3 * time.Hour}, now, now)
	if v := deadlineText(zh, "x", ceil, now, ""); v.ExtendRefusal != "不能延长 1 小时：你的配额每次启动最多允许运行 3 小时；如需运行更久，请停止后重新启动工作台，或联系管理员" {
		t.Errorf("zh extend refusal %q", v.ExtendRefusal)
	}
	if v := deadlineText(en, "x", ceil, now, ""); !strings.HasPrefix(v.ExtendRefusal, "no +1 h: your quota allows at most 3 h of runtime per start") {
		t.Errorf("en extend refusal %q", v.ExtendRefusal)
	}
}

func TestQuotaTextPerLocale(t *testing.T) {
	zh := i18n.WithLocale(context.Background(), i18n.Chinese)
	for in, want := range map[string]string{
		"You have spent 80% or more of your monthly budget.":             "你本月的预算已花掉 80% 或更多。",
		"quota exceeded: the monthly limit of 1200 GPU-hours is used up": "超出配额：本月 1,200 GPU 小时的额度已用完",
		"quota exceeded: the monthly budget is used up":                  "超出配额：本月预算已用完",
		"":                                 "",
		"something the page does not know": "something the page does not know",
	} {
		if got := quotaText(zh, in); got != want {
			t.Errorf("quotaText(%q) = %q, want %q", in, got, want)
		}
	}
	if got := quotaText(context.Background(), "You have spent 80% or more of your monthly budget."); got != "You have spent 80% or more of your monthly budget." {
		t.Errorf("en warning %q", got)
	}
}

// The notebook host's own pages (no portal layout there) follow the
// reader's Accept-Language, with <html lang> to match.
func TestNotebookPageInChinese(t *testing.T) {
	r := httptest.NewRequest(http.MethodGet, "http://wb1.nb.example.org/nowhere", nil)
	r.Header.Set("Accept-Language", "zh-CN,zh;q=0.9")
	lc := notebookLocale(r)
	w := httptest.NewRecorder()
	notebookPage(lc, w, http.StatusForbidden, i18n.T(lc, "Link expired"),
		i18n.T(lc, "This link to the workbench has expired or was already used. Open the workbench again from the portal."), "http://portal/workbenches/wb1")
	body := w.Body.String()
	for _, want := range []string{`<html lang="zh-CN">`, "<h1>链接已失效</h1>", "请从门户重新打开工作台", ">返回门户</a>"} {
		if !strings.Contains(body, want) {
			t.Errorf("notebook page lacks %q:\n%s", want, body)
		}
	}
	if w.Code != http.StatusForbidden || w.Header().Get("Content-Language") != "zh-CN" {
		t.Errorf("status %d, Content-Language %q", w.Code, w.Header().Get("Content-Language"))
	}
}
