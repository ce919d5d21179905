package handlers

import (
	"context"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/gin-gonic/gin"

	"workbench/models/pricing"
	"workbench/orchestrator"
	"workbench/templates"
	"workbench/templates/i18n"
)

// zhGin is a gin context whose request chose Chinese, as the locale
// middleware leaves it.
func zhGin() *gin.Context {
	c, _ := gin.CreateTestContext(httptest.NewRecorder())
	r := httptest.NewRequest("GET", "/admin/users", nil)
	c.Request = r.WithContext(i18n.WithLocale(r.Context(), i18n.Chinese))
	return c
}

// The text the admin, calculator and GPU handlers build reads in the
// request's language; without a locale (the CSV, the JSON API) it is
// English as before.
func TestHandlerTextInChinese(t *testing.T) {
	zh := i18n.WithLocale(context.Background(), i18n.Chinese)
	now := time.Date(2026, 1, 2, 14, 0, 0, 0, time.UTC)
	g := orchestrator.GPUIdle{Timeout: time.Hour, ThresholdPercent: 5, Since: now.Add(-42 * time.Minute), For: 42 * time.Minute,
		StopAt: now.Add(18 * time.Minute), Warn: true}
	for _, c := range []struct{ got, want string }{
		{gpuIdleText(zh, g, now).Text, "GPU 已空闲 42 分钟——除非使用 GPU，否则将于 14:18 UTC 停止（主目录保留）。"},
		{gpuIdleText(nil, g, now).Text, "GPU idle for 42 min — stops at 14:18 UTC unless its GPUs are used (home kept)."},
		{gpuIdleText(zh, orchestrator.GPUIdle{Timeout: 90 * time.Minute, ThresholdPercent: 5}, now).Text, "GPU 空闲回收：GPU 利用率低于 5% 持续 1 小时 30 分钟 后停止。"},
		{waitTextIn(zh, 300), "5 分钟"},
		{trc(zhGin(), "%d wrong passwords", 1), "1 次密码错误"},
		{i18n.T(context.Background(), "%d wrong passwords", 1), "1 wrong password"},
		{i18n.T(context.Background(), "%d wrong passwords", 12000), "12,000 wrong passwords"},
		{mirrorErrorT(zhGin(), `line 2: registry "http://x" must be a host name without http:// or https://`), `第 2 行：仓库 "http://x" 必须是主机名，不带 http:// 或 https://`},
		{mirrorErrorT(zhGin(), `line 3: docker.io has two mirrors`), "第 3 行：docker.io 有两个镜像站"},
		{mirrorErrorT(zhGin(), `something new`), "something new"},
		{trcMsg(zhGin(), "no such user"), "没有这个用户"},
		{trcMsg(zhGin(), "must be at least 10 characters"), "至少需要 10 个字符"},
		{trcMsg(zhGin(), "port 8888 is the workbench's own app (Jupyter): its Open button reaches it"), "端口 8888 是工作台自己的应用（Jupyter）：用它的“打开”按钮访问"},
		{trcMsg(zhGin(), "100% sure %s"), "100% sure %s"}, // a % in a message is text, never a verb
		{calcTypical(zh, "maintenance_rate"), "维保合同和备件：每年为购置价的 5–10%"},
		{templates.TierName(zh, "spot"), "竞价"},
		{seededText(zh, "a person is waiting: first in the queue, never preempted"), "有人在等待：排在队列最前，从不被抢占"},
		{seededText(zh, "discounted; yields its GPUs to higher classes after a grace period"), "折扣价；宽限期结束后把 GPU 让给更高优先级"},
		{seededText(zh, "NVIDIA's optimised PyTorch container (NGC 24.10): CUDA 12.6, cuDNN, NCCL, Apex, JupyterLab."), "NVIDIA 优化的 PyTorch 容器（NGC 24.10）：CUDA 12.6、cuDNN、NCCL、Apex、JupyterLab。"},
		{seededText(zh, "Simulated Sunday: an administrator's own words"), "Simulated Sunday: an administrator's own words"},
		{seededText(zh, "Usage"), "Usage"}, // a catalog key an administrator typed is theirs, not translated
		{gpuStateLabel(zh, orchestrator.GPUDrained), "已停止调度（不分配）"},
		{unitReadingTextT(zh, &orchestrator.UnitReading{}), "显存：无法读取 · 无法按实例读取利用率"},
		{checkMessageT(zhGin(), "All checks passed: the image starts as 1000:100, Jupyter answers under the base URL with the token, and the home /home/jovyan is writable."),
			"全部检查通过：镜像以 1000:100 身份启动，Jupyter 在基础 URL 下用令牌应答，主目录 /home/jovyan 可写。"},
		{checkMessageT(zhGin(), "the start command's program jupyter cannot be run by user 1000: check the start command and Run as user"),
			"用户 1000 无法运行启动命令的程序 jupyter：请检查启动命令和“运行用户”"},
		{checkMessageT(zhGin(), "an engine message nobody foresaw"), "an engine message nobody foresaw"},
		{calcErrs(zh, pricing.FieldErrors{"pue": "must be between 1 and 3"})["pue"], "必须在 1 到 3 之间"},
		{calcErrs(zh, pricing.FieldErrors{"utilization": "must be more than 0 and at most 100%"})["utilization"], "必须大于 0 且不超过 100%"},
		{calcErrs(zh, pricing.FieldErrors{"gpu_model": "choose the GPU model"})["gpu_model"], "请选择 GPU 型号"},
	} {
		if c.got != c.want {
			t.Errorf("got %q, want %q", c.got, c.want)
		}
	}

	vs, saving := calcVsText(zh, pricing.Comparison{VsHereBps: -4940, VsHereOK: true})
	if vs != "本平台便宜 49.4%" || !saving {
		t.Errorf("vs %q %v", vs, saving)
	}
	if vs, _ := calcVsText(nil, pricing.Comparison{VsHereBps: 1200, VsHereOK: true}); vs != "12% more here" {
		t.Errorf("English vs %q", vs)
	}
	// A shipped default rate's source is ours and is translated; the
	// figure, date and currencies stay.
	conv := pricing.Conversions("USD", nil, pricing.DefaultFXRates)["CNY"]
	if d := fxDescribe(zh, conv); !strings.HasPrefix(d, "1 USD = 7.2 CNY（2026-09，默认值：由内置云价格目录") {
		t.Errorf("zh rate %q", d)
	}
	if d, want := fxDescribe(nil, conv), conv.Describe(); d != want {
		t.Errorf("English rate %q, want pricing's %q", d, want)
	}
	o := pricing.Offer{Provider: "AWS", Name: "p5.48xlarge", Tier: pricing.TierOnDemand}
	if l := calcOfferLabel(zh, o); l != "AWS p5.48xlarge（按量计费）" {
		t.Errorf("offer %q", l)
	}
	if l := calcOfferLabel(nil, o); l != o.Label() {
		t.Errorf("English offer %q, want %q", l, o.Label())
	}
}
