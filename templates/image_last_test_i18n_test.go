package templates_test

import (
	"context"
	"strings"
	"testing"

	"workbench/templates"
	"workbench/templates/i18n"
)

// The catalog's last Test image run reads in the reader's language: it
// said "上次测试：passed".
func TestImageLastTestStateIsTranslated(t *testing.T) {
	zh := i18n.WithLocale(context.Background(), i18n.Chinese)
	for state, want := range map[string]string{"passed": "上次测试：通过", "failed": "上次测试：失败"} {
		s := templates.ImageStatus{Presence: "present", LastTest: &templates.ImageTestSummary{State: state, URL: "/admin/images/1/test"}}
		doc, _ := renderIn(t, zh, templates.ImageAdminActions(1, s))
		if got := strings.TrimSpace(doc.Find("[data-testid=last-test] a").Text()); got != want {
			t.Errorf("%s: %q, want %q", state, got, want)
		}
	}
}
