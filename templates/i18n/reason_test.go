package i18n

import (
	"context"
	"fmt"
	"strconv"
	"testing"
)

// Reason recognises a stored English text by its format, nested reasons
// included, and leaves what it does not know as it is. A reason inside a
// reason reads as a clause, in English too: one colon to a sentence.
func TestReasonRecognisesFormats(t *testing.T) {
	en := context.Background()
	zh := WithLocale(en, Chinese)
	const nestedEN = "stopped: quota exceeded — the monthly budget is used up (your files are kept)"
	for _, c := range []struct{ in, want string }{
		// %d and %s values taken back out and put in the Chinese text.
		{"quota exceeded: at most 2 GPUs at once (you hold 2, this asks 1)", "超出配额：同时最多 2 块 GPU（你已占用 2 块，本次申请 1 块）"},
		// %q values are unquoted and quoted again.
		{`your quota does not allow the flavor "gpu-xl"`, `你的配额不允许使用规格 "gpu-xl"`},
		// A reason inside a reason: both translated, the inner one a clause.
		{"stopped: quota exceeded: the monthly budget is used up (your files are kept)", "已停止：超出配额——本月预算已用完（你的文件已保留）"},
		// A queue reason built in four steps.
		{"2 × H100 needed; 1 free (1 reserved for someone else now); preemptible work is yielding its GPUs; 3 workbenches ahead of you",
			"需要 2 × H100；空闲 1 个（其中 1 个此刻已被他人预约）；可抢占的任务正在为它让出 GPU；你前面还有 3 个工作台"},
		// A state error: the state word and the hint are reasons too.
		{"the workbench is running; open it (only a stopped, failed or preempted workbench can be started)",
			"工作台当前状态为“运行中”；请直接打开它（只有已停止、已失败或被抢占的工作台才能启动）"},
		// Values that are no reasons stay as they are.
		{"stopped by an administrator (root)", "被管理员停止（root）"},
		// A reason made a sentence (an image pull's failure).
		{"The image ghcr.io/x/y:1 does not exist on ghcr.io — ask an admin to correct the image reference in the catalog.",
			"镜像 ghcr.io/x/y:1 在 ghcr.io 上不存在 —— 请联系管理员在目录中更正镜像引用。"},
		// One that starts with a registry's name keeps it as written.
		{"ghcr.io refused to hand out ghcr.io/x/y:1 (it needs credentials, or the name is wrong) — ask an admin to pre-pull the image or check its name.",
			"ghcr.io 拒绝提供 ghcr.io/x/y:1（需要凭据，或名称有误）—— 请联系管理员预先拉取该镜像或检查其名称。"},
		// Unknown text: as it is, even with a % in it.
		{"the engine said 100% no", "the engine said 100% no"},
		{"", ""},
	} {
		if got := Reason(zh, c.in); got != c.want {
			t.Errorf("Reason(zh, %q)\n got %q\nwant %q", c.in, got, c.want)
		}
		wantEN := c.in
		if c.in == "stopped: quota exceeded: the monthly budget is used up (your files are kept)" {
			wantEN = nestedEN
		}
		if got := Reason(en, c.in); got != wantEN {
			t.Errorf("Reason(en, %q) = %q, want %q", c.in, got, wantEN)
		}
	}
}

// Every format of the reasons area is recognised in its own English text:
// the page prints its Chinese text (a format that a more specific one
// shadows would print English on a Chinese page).
func TestEveryReasonFormatIsRecognised(t *testing.T) {
	zh := WithLocale(context.Background(), Chinese)
	n := 0
	for key := range ReasonKeys() {
		args := sampleArgs(key)
		for i, a := range args {
			if s, ok := a.(string); ok {
				args[i] = s + "-" + strconv.Itoa(i) // distinct values, so a value cannot be taken for another
			}
		}
		english := fmt.Sprintf(key, args...)
		if got, want := Reason(zh, english), T(zh, key, args...); got != want {
			t.Errorf("%q\n got %q\nwant %q", english, got, want)
		}
		n++
	}
	if n < 100 {
		t.Fatalf("only %d reason formats: the catalog file is not read", n)
	}
}

// After a page's own words and colon ("Could not start: %s."), a reason
// reads as a clause: the colons of its formats, nested ones too, as
// dashes, the values as they were, no full stop of its own; in English
// as in Chinese. The two colons stacked: "Could not start: quota exceeded:
// the monthly budget is used up".
func TestReasonClauseHasNoColonOfItsOwn(t *testing.T) {
	en := context.Background()
	zh := WithLocale(en, Chinese)
	for _, c := range []struct{ in, en, zh string }{
		{"quota exceeded: the monthly budget is used up",
			"quota exceeded — the monthly budget is used up", "超出配额——本月预算已用完"},
		{"quota exceeded: at most 2 GPUs at once (you hold 2, this asks 1)",
			"quota exceeded — at most 2 GPUs at once (you hold 2, this asks 1)", "超出配额——同时最多 2 块 GPU（你已占用 2 块，本次申请 1 块）"},
		// English keeps the models' digits (no grouping); Chinese groups.
		{"quota exceeded: the monthly limit of 1200 GPU-hours is used up",
			"quota exceeded — the monthly limit of 1200 GPU-hours is used up", "超出配额——本月 1,200 GPU 小时的额度已用完"},
		// A value keeps its colons (an image reference, an engine's words).
		{"could not get image ghcr.io/x:1: manifest unknown: x",
			"could not get image ghcr.io/x:1 — manifest unknown: x", "无法获取镜像 ghcr.io/x:1——manifest unknown: x"},
		// A reason made a sentence loses its full stop.
		{"The image ghcr.io/x/y:1 does not exist on ghcr.io — ask an admin to correct the image reference in the catalog.",
			"the image ghcr.io/x/y:1 does not exist on ghcr.io — ask an admin to correct the image reference in the catalog",
			"镜像 ghcr.io/x/y:1 在 ghcr.io 上不存在 —— 请联系管理员在目录中更正镜像引用"},
		// Unknown text: as it is.
		{"the engine said: no", "the engine said: no", "the engine said: no"},
	} {
		if got := ReasonClause(en, c.in); got != c.en {
			t.Errorf("ReasonClause(en, %q)\n got %q\nwant %q", c.in, got, c.en)
		}
		if got := ReasonClause(zh, c.in); got != c.zh {
			t.Errorf("ReasonClause(zh, %q)\n got %q\nwant %q", c.in, got, c.zh)
		}
	}
	// A digest's "sha256:" is no separator.
	if got := TClause(en, "the digest after @ must be sha256: and 64 hexadecimal digits"); got != "the digest after @ must be sha256: and 64 hexadecimal digits" {
		t.Errorf("sha256: %q", got)
	}
}

// The amounts inside a reason are written as the pages write money
// (Amount): the symbol first and thousands grouped in Chinese, the digits
// as the models rounded them, "< 0.01" kept; English as it was. A value
// that only looks like one ("2 GPU": no currency) stays.
func TestMoneyInsideAReasonReadsInTheReadersStyle(t *testing.T) {
	en := context.Background()
	zh := WithLocale(en, Chinese)
	for _, c := range []struct{ in, zh string }{
		{"quota exceeded: the 1234.57 CNY left of your monthly budget cannot cover this flavor's minimum charge of 1500.01 CNY (every run is charged at least 60 s)",
			"超出配额：本月预算剩余的 ¥1,234.57 不足以支付此规格的最低费用 ¥1,500.01（每次运行至少按 60 秒计费）"},
		{"quota exceeded: the < 0.01 USD left of your monthly budget cannot cover this flavor's minimum charge of 0.02 USD (every run is charged at least 60 s)",
			"超出配额：本月预算剩余的 < $0.01 不足以支付此规格的最低费用 $0.02（每次运行至少按 60 秒计费）"},
		{"quota exceeded: the 0.000800 EUR left of your monthly budget cannot cover this flavor's minimum charge of 0.001334 EUR (every run is charged at least 60 s)",
			"超出配额：本月预算剩余的 0.000800 EUR 不足以支付此规格的最低费用 0.001334 EUR（每次运行至少按 60 秒计费）"},
	} {
		if got := Reason(zh, c.in); got != c.zh {
			t.Errorf("Reason(zh, %q)\n got %q\nwant %q", c.in, got, c.zh)
		}
		if got := Reason(en, c.in); got != c.in {
			t.Errorf("Reason(en, %q) = %q, want it unchanged", c.in, got)
		}
	}
	for _, v := range []string{"2 GPU", "8.94 usd", "8.94", "USD"} {
		if got, ok := Get(Chinese).money(v); ok {
			t.Errorf("money(%q) = %q, want no amount", v, got)
		}
	}
	if got, _ := Get(Chinese).money("-1234.50 USD"); got != "-$1,234.50" {
		t.Errorf("money(-1234.50 USD) = %q", got)
	}
}

// A format that ends with a full stop of its own is still recognised
// after a page's words; only the stop goes.
func TestReasonClauseRecognisesAFormatWithItsFullStop(t *testing.T) {
	zh := WithLocale(context.Background(), Chinese)
	in := "Workbench nb is running: it started after 5 min in the queue."
	if got, want := ReasonClause(zh, in), "工作台 nb 已在运行——它在队列中等待了 5 分钟 后启动"; got != want {
		t.Errorf("ReasonClause(zh, %q)\n got %q\nwant %q", in, got, want)
	}
}
