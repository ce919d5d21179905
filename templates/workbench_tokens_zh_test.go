package templates_test

import (
	"strings"
	"testing"

	"workbench/templates"
)

// The access-token card's sentence in Chinese ends with Chinese
// punctuation around the code samples, not the English ":" and ".".
func TestWorkbenchTokensSentenceInChinese(t *testing.T) {
	doc := renderZh(t, templates.WorkbenchTokens(templates.WorkbenchTokensView{WorkbenchID: "k3x9", ServerURL: "https://portal/wb/k3x9/"}))
	text := strings.Join(strings.Fields(doc.Find(`[data-testid=wb-tokens] p.muted`).First().Text()), " ")
	for _, want := range []string{"curl：", "?token=<token>。"} {
		if !strings.Contains(text, want) {
			t.Errorf("token card reads %q; want it to contain %q", text, want)
		}
	}
}
