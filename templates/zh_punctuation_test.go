package templates

import (
	"context"
	"strings"
	"testing"

	"workbench/templates/i18n"
)

// TestChineseSentencesBuiltFromPieces: sentences the pages build from
// translated pieces read as Chinese: the usage page's held-vs-used
// parenthesis is full width on both sides (it opened with "(" and closed
// with "）"), and the token help has its verb ("以 … 或 … 。" had none).
func TestChineseSentencesBuiltFromPieces(t *testing.T) {
	zh := i18n.WithLocale(context.Background(), i18n.Chinese)
	var b strings.Builder
	if err := HeldVsUsed(HeldVsUsedView{Known: true, Held: "2.0", Used: "1.0", UsedPercent: 50}).Render(zh, &b); err != nil {
		t.Fatal(err)
	}
	text := strings.Join(strings.Fields(stripTags(b.String())), " ")
	if !strings.Contains(text, "（50% ，按利用率加权）") && !strings.Contains(text, "（50%，按利用率加权）") {
		t.Errorf("held vs used in Chinese: %q", text)
	}
	b.Reset()
	if err := WorkbenchTokens(WorkbenchTokensView{ServerURL: "http://x/wb/1/"}).Render(zh, &b); err != nil {
		t.Fatal(err)
	}
	if text := stripTags(b.String()); !strings.Contains(text, "发送方式为") {
		t.Errorf("token help in Chinese has no verb: %q", text)
	}
}

// stripTags drops the markup of s (the test reads the text).
func stripTags(s string) string {
	var b strings.Builder
	in := false
	for _, r := range s {
		switch {
		case r == '<':
			in = true
		case r == '>':
			in = false
		case !in:
			b.WriteRune(r)
		}
	}
	return b.String()
}
