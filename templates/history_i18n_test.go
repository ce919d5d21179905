package templates_test

import (
	"context"
	"strings"
	"testing"

	"workbench/templates"
	"workbench/templates/i18n"
)

// The History table shows each state change's reason in the reader's
// language: the messages are stored in English (models.Reasonf), and a
// Chinese reader saw them so until the table asked i18n.Reason.
func TestWorkbenchHistoryInChinese(t *testing.T) {
	zh := i18n.WithLocale(context.Background(), i18n.Chinese)
	wb := templates.WorkbenchRow{ID: "k3x9", Name: "bert", State: "stopped", Currency: "CNY"}
	v := templates.WorkbenchView{WB: wb, History: []templates.HistoryRow{
		{At: "a", State: "queued", Message: "queued: it starts as soon as its GPUs are free"},
		{At: "b", State: "requested", Message: "placed from the queue"},
		{At: "c", State: "stopped", Message: "stopped after 1h0m0s without activity (idle timeout)"},
		{At: "d", State: "running", Message: ""},
	}}
	doc, _ := renderIn(t, zh, templates.WorkbenchPage(zhPage("bert", "/workbenches/k3x9"), v))
	msgs := doc.Find(testid("history-message"))
	want := []string{"已排队：GPU 一空闲即启动", "已从队列中分配", "在 1h0m0s 无活动后被停止（空闲超时）", ""}
	if msgs.Length() != len(want) {
		t.Fatalf("%d history messages, want %d", msgs.Length(), len(want))
	}
	for i, w := range want {
		if got := strings.TrimSpace(msgs.Eq(i).Text()); got != w {
			t.Errorf("history row %d reads %q, want %q", i, got, w)
		}
	}

	// English readers keep the stored text as it is.
	doc, _ = renderIn(t, i18n.WithLocale(context.Background(), i18n.English), templates.WorkbenchPage(userPage("bert", "/workbenches/k3x9"), v))
	if got := strings.TrimSpace(doc.Find(testid("history-message")).Eq(1).Text()); got != "placed from the queue" {
		t.Errorf("English history row reads %q", got)
	}
}

// The statement's detail lines name their resource in the reader's
// language ("memory" read so on a Chinese statement).
func TestStatementResourceInChinese(t *testing.T) {
	zh := i18n.WithLocale(context.Background(), i18n.Chinese)
	v := templates.UsageView{Currency: "CNY", Lines: []templates.StatementLine{
		{Resource: "memory", Quantity: "256 GiB", ID: 1},
		{Resource: "gpu", GPUModel: "NVIDIA H100 80GB HBM3", Quantity: "4 GPU", ID: 2},
		{Resource: "slice", Quantity: "1 GPU 切片", ID: 3},
	}}
	doc, _ := renderIn(t, zh, templates.UsagePage(zhPage("用量", "/usage"), v))
	cells := doc.Find(testid("line-resource"))
	for i, want := range []string{"内存", "GPU NVIDIA H100 80GB HBM3", "GPU 切片"} {
		if got := strings.Join(strings.Fields(cells.Eq(i).Text()), " "); got != want {
			t.Errorf("line %d resource %q, want %q", i, got, want)
		}
	}
}
